// nat.click -- source NAT between the testbed's two links (solution), MazuNAT's outgoing half.
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the inside (10.70.1.0/24), towards the generator; next hop $PREV_MAC
//   $OUT_DEV  the outside, towards the sink; next hop $NEXT_MAC
// TCP and UDP from the inside leave as $PUBLIC, from a port in 1024-65535 chosen per
// flow; replies are mapped back to the inside host and port; anything else arriving
// from outside is dropped. IPRewriter keeps the flow table and fixes the checksums.

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $PUBLIC 10.70.2.1, $QUEUE 1024);

// MAPPINGS: input 0 from the inside (new flows get a public port), input 1 from the
// outside (only replies to mapped flows); output 0 to the outside, 1 to the inside
rw :: IPRewriter(pattern $PUBLIC 1024-65535# - - 0 1, drop);

// INSIDE -> OUTSIDE: IPv4, checked, TCP or UDP only
FromDevice($IN_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> IPClassifier(tcp or udp) -> [0]rw;
rw[0] -> EtherEncap(0x0800, $OUT_MAC, $NEXT_MAC) -> Queue($QUEUE) -> ToDevice($OUT_DEV);

// OUTSIDE -> INSIDE
FromDevice($OUT_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> IPClassifier(tcp or udp) -> [1]rw;
rw[1] -> EtherEncap(0x0800, $IN_MAC, $PREV_MAC) -> Queue($QUEUE) -> ToDevice($IN_DEV);
