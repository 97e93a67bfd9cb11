// nf-chain-cached.click -- the chain of nf-chain.click behind HeaderActionCache (FastPath's
// header-action consolidation; routerlab bench consolidation, the consolidated variant).
//
// HeaderActionCache (routers/click/elements, in the element package "routerlab") sends
// a flow's first packet out on its output 1, through Chain, and records what the chain
// did to its header when it comes back on input 1; the flow's later packets get the
// recorded actions applied at once and leave on output 0 without entering Chain.
//   click nf-chain-cached.click PCAP=flows.pcap   (CLICKPATH must name the package's folder)

define($PCAP packets.pcap);

require(package "routerlab", library services.click, library nfs.click, library chain.click);

FromDump($PCAP, STOP true, TIMING false) -> Strip(14) -> CheckIPHeader -> cache :: HeaderActionCache;
cache[1] -> Chain -> [1]cache;
cache[0] -> out :: Counter -> Discard;

DriverManager(wait, print out.count, stop);
