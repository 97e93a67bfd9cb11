// loadbalancer.click -- a hash-based load balancer between the testbed's links (Click
// userlevel): traffic for the service address $VIP goes to one of four backends, chosen
// per flow by a hash of addresses and ports (LoadBalancer in services.click); every
// backend sits behind $NEXT_MAC. Anything else is routed unchanged.

define($IN_DEV in0, $OUT_DEV out0,
       $OUT_MAC 02:72:6c:02:00:01, $NEXT_MAC 02:72:6c:02:00:02,
       $VIP 10.71.0.1,
       $B0 10.72.0.1, $B1 10.72.0.2, $B2 10.72.0.3, $B3 10.72.0.4,
       $BURST 32, $QUEUE 1024);

require(library services.click);

FromDevice($IN_DEV, SNIFFER true, BURST $BURST)
  -> Classifier(12/0800) -> Strip(14) -> CheckIPHeader
  -> DecIPTTL
  -> vip :: IPClassifier(dst host $VIP and (tcp or udp), -);

tx :: EtherEncap(0x0800, $OUT_MAC, $NEXT_MAC) -> Queue($QUEUE) -> ToDevice($OUT_DEV, BURST $BURST);

vip[0] -> LoadBalancer($B0, $B1, $B2, $B3) -> tx;
vip[1] -> tx;
