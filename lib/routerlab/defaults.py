"""The kit's defaults, defined once: the parameters of the PASTRAMI method, the
calibration router's capacities and trial validation's repeats. The command line shows
them in its help, and the notebooks and the library take them from here (through
:mod:`routerlab.analysis.stats`, which re-exports them). This module imports nothing, so that
``routerlab --help`` need not load numpy or pandas to print them. What a dataset's
campaign measures is in its campaign file (``datasets/<name>/campaign.yaml``), not here.
"""

#: PDR fraction X of PDR@X, a ratio: 0.005 is PDR@0.5%.
PDR_FRACTION = 0.005
#: TIR threshold eta below which a load counts as saturated.
ETA = 0.1
#: Entry multiplier m: a saturation candidate needs TIR < eta * m (strict mode).
ENTRY_MULTIPLIER = 3.0
#: Floor of the packet loss ratio on log axes and in relative interval widths.
PLR_FLOOR = 1e-6

#: Capacities of the calibration router ``bench calibrate`` tries, as fractions of the
#: generator's ceiling: the router is the kernel behind a limit, so they stay where the
#: kernel itself idles much of the time (``calibrate.BUSY_LIMIT``), a small share of the
#: XDP generator's ceiling.
CALIBRATION_FRACTIONS = (0.02, 0.04, 0.06)

#: Trial validation: repeats of a disturbed trial at most, after its first attempt
#: (:mod:`routerlab.measuring.validation`).
MAX_REPEATS = 3

#: What a search looks for: PDR, NDR or both (``routerlab measure --search``).
SEARCH_KINDS = ("pdr", "ndr", "both")
#: Where a search's range starts, as a fraction of the generator's ceiling (it ends at the
#: ceiling): the slowest engine (bmv2) forwards about 1% of the XDP generator's ceiling.
SEARCH_LOW_FRACTION = 0.001
#: Times a search is repeated, each on a fresh testbed with its engine started again, unless
#: a command or a campaign file says otherwise: its answer is the repeats' median with their
#: range (routerlab.analysis.repeats). Three fit this machine (a search takes 20 to 60 s) and
#: are the fewest whose ranges, when they do not overlap, rank two engines at the one-sided
#: 5% level (two routers of one capacity separate in a given direction one time in 20).
SEARCH_REPEATS = 3

#: The traffic generators a testbed can drive (``--generator``), the default first: live XDP
#: frames (routerlab.testbed.xdpgen), or rlgen on an AF_PACKET socket (routerlab.testbed.traffic).
GENERATORS = ("xdp", "rlgen")

#: Seconds a router of one's own (the exec engine) has to become ready after its start
#: command runs.
EXEC_READY_TIMEOUT_S = 30.0

#: Seconds bmv2's switch has to answer its control plane (P4Runtime or Thrift) after it
#: starts.
BMV2_ANSWER_TIMEOUT_S = 30.0

# The generator's bursts and what trial validation takes for a disturbed trial
# (routerlab.testbed.traffic, routerlab.measuring.validation).
#: Frames per burst, both generators: rlgen's sendmmsg batch, the XDP generator's run of
#: its program. The packets offered during d seconds are up to one burst more than
#: rate * d.
BURST = 32
#: A trial counts as disturbed by the hypervisor when steal exceeds this fraction of CPU time.
STEAL_FLAG = 0.02
#: The stop probe's period, milliseconds: a stop of d ms reads as d - P to d. The probe's
#: own CPU time on this machine (docs/testbed.md): on a busy CPU 1.6% at 1 ms, 0.8% at 2,
#: 0.6% at 4; on an idle one 5.2%, 1.7% and 0.9%.
STOP_PROBE_PERIOD_MS = 2.0
#: A reading of the stop probe at or below this, milliseconds, is not held against a trial
#: (:mod:`routerlab.measuring.validation`): a chosen minimum, above what the probe reads on this
#: machine's router CPU when it idles or forwards below saturation (its router's receive
#: thread is below the probe, so the router's own work delays it little). Below the
#: probe's period, because the XDP chain's first queue, a 256-slot ring, lasts less than
#: the period at loads above 128 kpps (a stop of a millisecond overflows it above 256
#: kpps); above 512 kpps it lasts less than the floor too, and a stop between the two
#: is not held.
STOP_FLOOR_MS = 0.5
