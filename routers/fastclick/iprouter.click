// iprouter.click (FastClick) -- the IPv4 router of routers/click between the testbed's two
// links, on AF_PACKET, with FastClick's batching: FromDevice hands the router batches of
// up to $BATCH packets, and every element of router-core.click processes them as a batch.
//
// The same forwarding path as Click's (routers/click/router-core.click, tables.click and
// services.click, which routerlab copies next to this file). Defines as in
// routers/click/iprouter.click, plus:
//   $BATCH  packets per batch (FromDevice and ToDevice BURST)

define($IN_DEV in0, $OUT_DEV out0,
       $IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $MTU 1500, $BATCH 32, $QUEUE 1024,
       $CONTROL /tmp/routerlab-fastclick.sock);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  $IN_MAC,
  out_if  10.70.2.1  10.70.2.0/24  $OUT_MAC,
);

require(library services.click, library tables.click, library router-core.click);

ControlSocket(unix, $CONTROL);

elementclass Out { $dev | input -> Queue($QUEUE) -> sent :: Counter -> ToDevice($dev, BURST $BATCH) }

router :: IPRouter($NEXT_MAC, $PREV_MAC, $MTU);
FromDevice($IN_DEV, SNIFFER true, BURST $BATCH) -> router;
router[0] -> out :: Out($OUT_DEV);
router[1] -> back :: Out($IN_DEV);
