// nat.click -- source NAT between the testbed's two links, MazuNAT's outgoing half.
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the inside (10.70.1.0/24), towards the generator; next hop $PREV_MAC
//   $OUT_DEV  the outside, towards the sink; next hop $NEXT_MAC
// TCP and UDP from the inside leave as $PUBLIC, from a port in 1024-65535 chosen per
// flow; replies are mapped back to the inside host and port; anything else arriving
// from outside is dropped.
//
// Your task: TODOs 1-3 (README.md). Check it with: routerlab click check nat

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $PUBLIC 10.70.2.1, $QUEUE 1024);

// MAPPINGS: input 0 from the inside, input 1 from the outside; output 0 to the
// outside, output 1 to the inside
// TODO 1: replace the two input specifications: input 0 gives new flows the source
//         $PUBLIC and a port from 1024-65535 (a "pattern", sending the flow to output 0
//         and its replies to output 1); input 1 lets only replies through ("drop").
rw :: IPRewriter(pass 0, pass 1);

// INSIDE -> OUTSIDE: IPv4, checked, TCP or UDP only
FromDevice($IN_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> IPClassifier(tcp or udp) -> [0]rw;
// TODO 2: the outside's Ethernet header ($OUT_MAC to $NEXT_MAC) before the Queue.
rw[0] -> Queue($QUEUE) -> ToDevice($OUT_DEV);

// OUTSIDE -> INSIDE
FromDevice($OUT_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> IPClassifier(tcp or udp) -> [1]rw;
// TODO 3: the way in: rw's output 1 out of $IN_DEV, with the inside's Ethernet header
//         ($IN_MAC to $PREV_MAC) and a Queue.
rw[1] -> Discard;   // placeholder, so that the skeleton starts: TODO 3 replaces it
