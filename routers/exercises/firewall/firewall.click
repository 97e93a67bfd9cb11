// firewall.click -- a firewall in the wire between the testbed's two links.
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the inside, towards the generator
//   $OUT_DEV  the outside, towards the sink
// IPv4 from the inside passes to the outside only if the policy allows it (first match
// wins, default deny); what it denies is counted in denied.count and dropped. Frames
// pass unchanged: the firewall is a bump in the wire, it does not route. The way back,
// $OUT_DEV -> $IN_DEV, is open.
//
// Your task: TODOs 1-3 (README.md). Check it with: routerlab click check firewall

define($IN_DEV in0, $OUT_DEV out0, $QUEUE 1024);

// INSIDE -> OUTSIDE: output 0 IPv4, 1 anything else; the IP header is checked in place
// (CheckIPHeader(14) sets the IP header annotation the filter reads, behind Ethernet)
FromDevice($IN_DEV, SNIFFER true) -> c :: Classifier(12/0800, -);
c[1] -> Discard;

// POLICY: output 0 passes, output 1 is denied
// TODO 1: write the policy of README.md, one rule a line, first match first:
//         "0 PATTERN" lets a packet pass, "1 PATTERN" denies it; end with the default.
c[0] -> CheckIPHeader(14)
     -> policy :: IPFilter(0 all);   // placeholder policy: everything passes
policy[0] -> Queue($QUEUE) -> ToDevice($OUT_DEV);
// TODO 2: count what the policy denies (its output 1) in a Counter named denied,
//         then drop it.

// OUTSIDE -> INSIDE
// TODO 3: the way back is open: everything from $OUT_DEV leaves on $IN_DEV.
