"""The kit's defaults, defined once: the parameters of the PASTRAMI method and the
comparison campaign. The command line shows them in its help, and the notebooks and the
library take them from here (through :mod:`routerlab.stats` and
:mod:`routerlab.comparison`, which re-export them). This module imports nothing, so that
``routerlab --help`` need not load numpy or pandas to print them.
"""

#: PDR fraction X of PDR@X, a ratio: 0.005 is PDR@0.5%.
PDR_FRACTION = 0.005
#: TIR threshold eta below which a load counts as saturated.
ETA = 0.1
#: Entry multiplier m: a saturation candidate needs TIR < eta * m (strict mode).
ENTRY_MULTIPLIER = 3.0
#: Floor of the packet loss ratio on log axes and in relative interval widths.
PLR_FLOOR = 1e-6

#: The 100GE comparison campaign: published scenario -> our preset.
COMPARISON_SCENARIOS = {"single_flow_50fw": "single-flow-fw50", "gre_multiflow_50fw": "gre-multiflow-fw50",
                        "routes_900k_multiflow_50fw": "routes900k-multiflow-fw50",
                        "ddos_drop_50pct": "ddos-drop50"}
#: The engines the campaign measures (those absent are grey cells).
COMPARISON_ENGINES = ("linux", "nft", "ebpf", "click", "fastclick", "fastclick-dpdk", "bmv2")
#: Offered loads of the campaign, as fractions of the generator's ceiling.
COMPARISON_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
#: Capacities of the calibration router ``bench calibrate`` tries, as fractions of the
#: generator's ceiling.
CALIBRATION_FRACTIONS = (0.1, 0.25, 0.5)

#: Trial validation: repeats of a disturbed trial at most, after its first attempt
#: (:mod:`routerlab.validation`).
MAX_REPEATS = 3
