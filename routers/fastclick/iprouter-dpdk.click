// iprouter-dpdk.click (FastClick) -- the same router on DPDK: FastClick's intended fast
// path. On the testbed the two veth links are DPDK ports through DPDK's af_xdp driver
// (routerlab starts click with --vdev=net_af_xdp0,iface=$IN_DEV and net_af_xdp1 for
// $OUT_DEV), so packets go from the veth's XDP hook straight to FastClick, bypassing
// the kernel stack. Port 0 faces the generator, port 1 the sink.
//   $BATCH  packets per batch (FromDPDKDevice and ToDPDKDevice BURST)

define($IN_MAC 02:72:6c:01:00:01, $OUT_MAC 02:72:6c:02:00:01,
       $PREV_MAC 02:72:6c:01:00:02, $NEXT_MAC 02:72:6c:02:00:02,
       $MTU 1500, $BATCH 32,
       $CONTROL /tmp/routerlab-fastclick.sock);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  $IN_MAC,
  out_if  10.70.2.1  10.70.2.0/24  $OUT_MAC,
);

require(library services.click, library tables.click, library router-core.click);

ControlSocket(unix, $CONTROL);

router :: IPRouter($NEXT_MAC, $PREV_MAC, $MTU);
FromDPDKDevice(0, BURST $BATCH) -> router;
router[0] -> out :: { input -> sent :: Counter -> output } -> ToDPDKDevice(1, BURST $BATCH);
router[1] -> ToDPDKDevice(0, BURST $BATCH);
