// loadbalancer.click -- a per-flow load balancer between the testbed's two links.
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the clients' side, towards the generator; next hop $PREV_MAC
//   $OUT_DEV  the backends' side, towards the sink; next hop $NEXT_MAC for every backend
// TCP and UDP for the service address $VIP go to one of four backends, $B0-$B3, chosen
// per flow by a hash of its addresses and ports; the destination is rewritten to the
// backend, the port kept. Every packet of a flow goes to the same backend. The
// backends' replies leave with $VIP as their source again. Anything else from the
// clients passes unchanged; anything else from the backends' side is dropped.
//
// Your task: TODOs 1-3 (README.md). Check it with: routerlab click check loadbalancer

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $VIP 10.71.0.1,
       $B0 10.72.0.1, $B1 10.72.0.2, $B2 10.72.0.3, $B3 10.72.0.4,
       $QUEUE 1024);

// CLIENTS -> BACKENDS: output 0 for the service, 1 anything else
FromDevice($IN_DEV, SNIFFER true)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> vip :: IPClassifier(dst host $VIP and (tcp or udp), -);

tx :: EtherEncap(0x0800, $OUT_MAC, $NEXT_MAC) -> Queue($QUEUE) -> ToDevice($OUT_DEV);
vip[1] -> tx;

// TODO 1: choose a backend per flow: a HashSwitch with four outputs over the bytes that
//         name a flow (source and destination address, then the two ports: 12 bytes
//         from offset 12 of the IP header).
// TODO 2: an IPRewriter named rw whose input i rewrites a new flow's destination to
//         backend i, keeping everything else (output 0 for the flow, output 1 for its
//         replies), and whose input 4 lets only replies through; its output 0 goes to tx.
vip[0] -> tx;   // placeholder: service packets leave unchanged until TODOs 1-2 replace it

// BACKENDS -> CLIENTS
// TODO 3: from $OUT_DEV (IPv4, Ethernet header stripped, checked) into rw's input 4, and
//         rw's output 1 out of $IN_DEV with the clients' Ethernet header
//         ($IN_MAC to $PREV_MAC).
