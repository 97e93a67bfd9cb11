// firewall.click -- a firewall in the wire between the testbed's two links (solution).
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the inside, towards the generator
//   $OUT_DEV  the outside, towards the sink
// IPv4 from the inside passes to the outside only if the policy allows it (first match
// wins, default deny); what it denies is counted in denied.count and dropped. Frames
// pass unchanged: the firewall is a bump in the wire, it does not route. The way back,
// $OUT_DEV -> $IN_DEV, is open.

define($IN_DEV in0, $OUT_DEV out0, $QUEUE 1024);

// INSIDE -> OUTSIDE: output 0 IPv4, 1 anything else; the IP header is checked in place
// (CheckIPHeader(14) sets the IP header annotation the filter reads, behind Ethernet)
FromDevice($IN_DEV, SNIFFER true) -> c :: Classifier(12/0800, -);
c[1] -> Discard;

// POLICY: output 0 passes, output 1 is denied
c[0] -> CheckIPHeader(14)
     -> policy :: IPFilter(1 src net 192.0.2.0/24,
                           0 tcp dst port 22 and src net 10.70.1.0/24,
                           0 tcp dst port 80 or tcp dst port 443,
                           0 udp dst port 53,
                           0 icmp type echo,
                           1 all);
policy[0] -> Queue($QUEUE) -> ToDevice($OUT_DEV);
policy[1] -> denied :: Counter -> Discard;

// OUTSIDE -> INSIDE: open
FromDevice($OUT_DEV, SNIFFER true) -> Queue($QUEUE) -> ToDevice($IN_DEV);
