// forward.click -- moves frames between the testbed's two links and counts them (solution).
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the link towards the generator
//   $OUT_DEV  the link towards the sink
// Every frame that arrives on one link leaves on the other, unchanged.
// Counters: in2out.count (frames that came in on $IN_DEV), out2in.count (on $OUT_DEV).

define($IN_DEV in0, $OUT_DEV out0, $QUEUE 1024);

// IN -> OUT: FromDevice pushes, ToDevice pulls; the Queue takes the pushes and is pulled from
FromDevice($IN_DEV, SNIFFER true) -> in2out :: Counter -> Queue($QUEUE) -> ToDevice($OUT_DEV);

// OUT -> IN
FromDevice($OUT_DEV, SNIFFER true) -> out2in :: Counter -> Queue($QUEUE) -> ToDevice($IN_DEV);
