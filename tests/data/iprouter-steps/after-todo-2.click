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
// A student's file after TODO 2, for the course's step-by-step test (tests/test_click_exercises.py).

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $MTU 1500, $QUEUE 1024, $BURST 32);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  $IN_MAC,
  out_if  10.70.2.1  10.70.2.0/24  $OUT_MAC,
);

// PORTS: the sending half of a link
elementclass Out { $dev | input -> Queue($QUEUE) -> sent :: Counter -> ToDevice($dev, BURST $BURST) }
back :: Out($IN_DEV);
out  :: Out($OUT_DEV);
// CLASSIFY (TODO 1)
c0 :: Classifier(12/0806 20/0001, 12/0800, -);
c1 :: Classifier(12/0806 20/0001, 12/0800, -);
FromDevice($IN_DEV, SNIFFER true, BURST $BURST) -> c0;
FromDevice($OUT_DEV, SNIFFER true, BURST $BURST) -> c1;
c0[2] -> Discard;
c1[2] -> Discard;
// ARP (TODO 2)
c0[0] -> ARPResponder(in_if) -> back;
c1[0] -> ARPResponder(out_if) -> out;
c0[1] -> Discard;   // until TODO 3
c1[1] -> Discard;
