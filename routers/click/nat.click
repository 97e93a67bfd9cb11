// nat.click -- source NAT between the testbed's two links (Click userlevel), in the
// spirit of Click's MazuNAT: hosts on the inside ($IN_DEV, 10.70.1.0/24) reach the outside
// ($OUT_DEV) as $PUBLIC; replies are mapped back, everything else from outside is dropped.
// TCP and UDP only (IPRewriter); routing is one next hop each way, as on the testbed.
//   click nat.click IN_DEV=... OUT_DEV=... IN_MAC=... OUT_MAC=... PREV_MAC=... NEXT_MAC=...

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $PUBLIC 10.70.2.1, $BURST 32, $QUEUE 1024);

require(library services.click);

nat :: SourceNAT($PUBLIC);

// INSIDE -> OUTSIDE: IPv4 only, checked, TTL decremented, rewritten, to the next hop
FromDevice($IN_DEV, SNIFFER true, BURST $BURST)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> DecIPTTL -> [0]nat;
nat[0] -> EtherEncap(0x0800, $OUT_MAC, $NEXT_MAC) -> Queue($QUEUE) -> ToDevice($OUT_DEV, BURST $BURST);

// OUTSIDE -> INSIDE: only replies to mapped flows come back
FromDevice($OUT_DEV, SNIFFER true, BURST $BURST)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> DecIPTTL -> [1]nat;
nat[1] -> EtherEncap(0x0800, $IN_MAC, $PREV_MAC) -> Queue($QUEUE) -> ToDevice($IN_DEV, BURST $BURST);
