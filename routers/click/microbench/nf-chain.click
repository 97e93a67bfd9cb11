// nf-chain.click -- a chain of network functions, fed from memory (routerlab bench
// consolidation, the plain variant).
//
// FromDump reads the frames of $PCAP (routerlab writes it: one 64-byte UDP frame per
// packet, in flow order) as fast as it can and stops at its end; Chain is the chain
// under test, from the generated library chain.click. The configuration prints how many
// packets came out and stops. The element package "routerlab" is loaded as in
// nf-chain-cached.click, so that both variants start alike.
//   click nf-chain.click PCAP=flows.pcap   (CLICKPATH must name the package's folder)

define($PCAP packets.pcap);

require(package "routerlab", library services.click, library nfs.click, library chain.click);

FromDump($PCAP, STOP true, TIMING false) -> Strip(14) -> CheckIPHeader
  -> Chain
  -> out :: Counter -> Discard;

DriverManager(wait, print out.count, stop);
