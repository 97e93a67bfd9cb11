// iprouter.click -- an IPv4 router between the testbed's two links.
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   link towards the generator, router address 10.70.1.1/24, MAC $IN_MAC
//   $OUT_DEV  link towards the sink,      router address 10.70.2.1/24, MAC $OUT_MAC
// Neighbours are static (the testbed's hosts never answer ARP): 10.70.1.2 is $PREV_MAC,
// 10.70.2.2 is $NEXT_MAC.
// Routes: 10.70.1.0/24 and 10.71.9.0/24 (via 10.70.1.2) leave on $IN_DEV; 10.70.2.0/24
// and 10.71.0.0/16 (via 10.70.2.2) on $OUT_DEV; anything else is unreachable.
//
// Your task: TODOs 1-6 (README.md). Check it with: routerlab click check iprouter

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $MTU 1500, $QUEUE 1024, $BURST 32);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  $IN_MAC,
  out_if  10.70.2.1  10.70.2.0/24  $OUT_MAC,
);

// PORTS: the sending half of a link. Declare one per link when you need them:
//   back :: Out($IN_DEV);   out :: Out($OUT_DEV);
// (Click refuses an element whose input is connected to nothing.)
elementclass Out { $dev | input -> Queue($QUEUE) -> sent :: Counter -> ToDevice($dev, BURST $BURST) }

// CLASSIFY
// TODO 1: give each Classifier three outputs: 0 ARP requests (EtherType 0x0806 at offset
//         12, operation 1 at offset 20), 1 IPv4 (0x0800), 2 anything else.
// As shipped, each Classifier has one output, pattern `-` (every frame), and that output
// goes to Discard, so that the skeleton starts: Click refuses an output connected to
// nothing, and gives a Classifier as many outputs as are connected. Replace both
// placeholders: the patterns, and the connections of every output. Until a later TODO
// takes an output (ARP in TODO 2, IPv4 in TODO 3), connect it to Discard: each step
// then starts, and the check says which steps pass.
c0 :: Classifier(-);
c1 :: Classifier(-);
FromDevice($IN_DEV, SNIFFER true, BURST $BURST) -> c0;
FromDevice($OUT_DEV, SNIFFER true, BURST $BURST) -> c1;
c0[0] -> Discard;   // placeholder: every frame from $IN_DEV dropped
c1[0] -> Discard;   // placeholder: every frame from $OUT_DEV dropped

// ARP
// TODO 2: answer ARP requests for the router's address on each link (ARPResponder with
//         in_if or out_if), sending the reply back out of the link it came from.

// CHECK
// TODO 3: IPv4 from either link: strip the Ethernet header, check the IP header
//         (CheckIPHeader), and set the destination annotation for the lookup (GetIPAddress).

// ROUTE
// TODO 4: a RadixIPLookup named rt with the routes above: output 0 for the router's own
//         addresses, 1 towards the generator, 2 towards the sink, 3 for no route.

// FORWARD
// TODO 5: for each link: DecIPTTL (it also fixes the checksum), IPFragmenter($MTU), and
//         the Ethernet header for the next hop (EtherEncap), then out of that link.

// ICMP
// TODO 6: what a router owes: ICMP time exceeded for an expired TTL (DecIPTTL's output 1),
//         net unreachable for no route, fragmentation needed (IPFragmenter's output 1),
//         each routed back towards the sender (into rt again); answer pings to the
//         router (ICMPPingResponder).
