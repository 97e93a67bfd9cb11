// iprouter-nodev.click -- the same router fed from memory: no devices, no root.
//
// InfiniteSource sends $COUNT copies of one UDP packet to $DST with TTL $TTL through
// IPRouter; counters show where they went. Used by tests/ to parse and smoke-test the
// router, and for in-memory microbenchmarks (click -e: no kernel, no generator).
//   click iprouter-nodev.click COUNT=1000 TTL=1   -> every packet becomes an ICMP error

define($COUNT 1000, $DST 10.71.0.1, $TTL 64, $MTU 1500);

AddressInfo(
  in_if   10.70.1.1  10.70.1.0/24  02:00:00:00:00:01,
  out_if  10.70.2.1  10.70.2.0/24  02:00:00:00:00:02,
);

require(library services.click, library tables.click, library router-core.click);

router :: IPRouter(02:00:00:00:00:04, 02:00:00:00:00:03, $MTU);

// SOURCE: one UDP packet (ports 5000 -> 5001, 10 bytes of payload), IPv4 and Ethernet headers
InfiniteSource(DATA \<1388 1389 0012 0000 0000 0000 0000 0000 0000>, LIMIT $COUNT, STOP true)
  -> IPEncap(17, 10.70.1.2, $DST, TTL $TTL)
  -> EtherEncap(0x0800, 02:00:00:00:00:03, 02:00:00:00:00:01)
  -> router;

// SINKS: count what was forwarded and what came back as ICMP errors
router[0] -> fwd :: Counter -> Discard;
router[1] -> err :: Counter -> Discard;

DriverManager(wait, print fwd.count, print err.count, stop);
