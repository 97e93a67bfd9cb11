// forwarding.click -- the router of router-core.click with one route, fed from memory:
// the in-memory half of the MoonRoute comparison (routerlab bench forwarding, bench batch).
//
// InfiniteSource pushes $PACKETS copies of one prebuilt Ethernet frame ($FRAME, hex)
// into IPRouter, $BURST at a time (FastClick passes them on as batches of that size), so
// the source costs next to nothing per packet. Counters show where packets went; the
// configuration prints both and stops.
//   click forwarding.click PACKETS=1000   -> prints 1000 (forwarded) and 0 (ICMP errors)
//
// $FRAME defaults to the generator's single-flow packet (routerlab.testbed.traffic.udp_frame: a
// 64-byte UDP frame from 10.70.1.2 to 10.71.0.1, between the testbed's MACs); routerlab
// passes the same frame on the command line. Routes and firewall come from tables.click,
// which routerlab writes for the scenario single-flow (one route).

define($FRAME 02726c01000102726c01000208004500002e00000000401165300a4601020a47000113881389001aa740726f757465726c6162210000000000000000,
       $PACKETS 1000, $BURST 32, $MTU 1500);

require(library services.click, library tables.click, library router-core.click);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  02:72:6c:01:00:01,
  out_if  10.70.2.1  10.70.2.0/24  02:72:6c:02:00:01,
);

InfiniteSource(DATA \<$FRAME>, LIMIT $PACKETS, BURST $BURST, STOP true)
  -> router :: IPRouter(02:72:6c:02:00:02, 02:72:6c:01:00:02, $MTU);

router[0] -> fwd :: Counter -> Discard;
router[1] -> err :: Counter -> Discard;

DriverManager(wait, print fwd.count, print err.count, stop);
