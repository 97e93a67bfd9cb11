// loadbalancer.click -- a per-flow load balancer between the testbed's two links (solution).
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the clients' side, towards the generator; next hop $PREV_MAC
//   $OUT_DEV  the backends' side, towards the sink; next hop $NEXT_MAC for every backend
// TCP and UDP for the service address $VIP go to one of four backends, $B0-$B3, chosen
// per flow by a hash of its addresses and ports; the destination is rewritten to the
// backend, the port kept. Every packet of a flow goes to the same backend. The
// backends' replies leave with $VIP as their source again. Anything else from the
// clients passes unchanged; anything else from the backends' side is dropped.

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $VIP 10.71.0.1,
       $B0 10.72.0.1, $B1 10.72.0.2, $B2 10.72.0.3, $B3 10.72.0.4,
       $QUEUE 1024);

// BACKENDS: input i sends a new flow to backend i (output 0, replies to output 1);
// input 4 takes the backends' side, where only replies to known flows pass
rw :: IPRewriter(pattern - - $B0 - 0 1, pattern - - $B1 - 0 1,
                 pattern - - $B2 - 0 1, pattern - - $B3 - 0 1,
                 drop);

// CLIENTS -> BACKENDS: output 0 for the service, 1 anything else
FromDevice($IN_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> vip :: IPClassifier(dst host $VIP and (tcp or udp), -);

// the hash covers bytes 12-23 of the IP header and what follows: source and
// destination addresses, source and destination ports (no IP options on the testbed)
vip[0] -> hash :: HashSwitch(12, 12);
hash[0] -> [0]rw;
hash[1] -> [1]rw;
hash[2] -> [2]rw;
hash[3] -> [3]rw;

tx :: EtherEncap(0x0800, $OUT_MAC, $NEXT_MAC) -> Queue($QUEUE) -> ToDevice($OUT_DEV);
rw[0] -> tx;
vip[1] -> tx;

// BACKENDS -> CLIENTS: replies, their source mapped back to the service address
FromDevice($OUT_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> [4]rw;
rw[1] -> EtherEncap(0x0800, $IN_MAC, $PREV_MAC) -> Queue($QUEUE) -> ToDevice($IN_DEV);
