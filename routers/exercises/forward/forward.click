// forward.click -- moves frames between the testbed's two links and counts them.
//
// Interfaces (routerlab passes them as defines, see README.md):
//   $IN_DEV   the link towards the generator
//   $OUT_DEV  the link towards the sink
// Every frame that arrives on one link leaves on the other, unchanged.
// Counters: in2out.count (frames that came in on $IN_DEV), out2in.count (on $OUT_DEV).
//
// Your task: TODOs 1-3 (README.md). Check it with: routerlab click check forward

define($IN_DEV in0, $OUT_DEV out0, $QUEUE 1024);

// IN -> OUT
// TODO 1: count the frames that come in on $IN_DEV in a Counter named in2out
//         (declare it in the chain: ... -> in2out :: Counter -> ...).
// TODO 2: send them out of $OUT_DEV with ToDevice instead of throwing them away.
//         FromDevice pushes and ToDevice pulls: what must stand between them?
FromDevice($IN_DEV, SNIFFER true) -> Discard;   // placeholder: TODOs 1-2 replace Discard

// OUT -> IN
// TODO 3: the same in the other direction, counting in a Counter named out2in.
