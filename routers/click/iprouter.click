// iprouter.click -- IPv4 router between the testbed's two links (Click userlevel).
//
// Interfaces (routerlab passes them as defines; see routerlab.click_engine):
//   $IN_DEV   link from the generator, router address 10.70.1.1/24
//   $OUT_DEV  link to the sink,        router address 10.70.2.1/24
// Packets for the routes in tables.click leave on $OUT_DEV to $NEXT_MAC; ICMP errors
// leave on $IN_DEV to $PREV_MAC. Counters: out/sent.count (forwarded), and
// handlers of every element through the control socket $CONTROL.
//
// FromDevice runs in sniffer mode: routerlab drops the same packets at the DUT's nft
// ingress, after the capture point, so the kernel does not process them too (with kernel
// forwarding off as well).

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:00:00:00:00:01, $OUT_MAC 02:00:00:00:00:02,
       $PREV_MAC 02:00:00:00:00:03, $NEXT_MAC 02:00:00:00:00:04,
       $MTU 1500,
       $BURST 32, $QUEUE 1024,
       $CONTROL /tmp/routerlab-click.sock);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  $IN_MAC,
  out_if  10.70.2.1  10.70.2.0/24  $OUT_MAC,
);

require(library services.click, library tables.click, library router-core.click);

ControlSocket(unix, $CONTROL);

// PORTS: one input link, two outputs (forwarded traffic, ICMP errors back)
elementclass Out { $dev | input -> Queue($QUEUE) -> sent :: Counter -> ToDevice($dev, BURST $BURST) }

router :: IPRouter($NEXT_MAC, $PREV_MAC, $MTU);
FromDevice($IN_DEV, SNIFFER true, BURST $BURST) -> router;
router[0] -> out :: Out($OUT_DEV);
router[1] -> back :: Out($IN_DEV);
