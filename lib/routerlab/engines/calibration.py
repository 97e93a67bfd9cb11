"""``calibration``: a router whose capacity is known, to check the whole measuring chain
(generator, testbed, counters, searches) against a true answer.

It is the kernel forwarding (:class:`~routerlab.engines.kernel.Linux`) behind an nftables
token bucket in the forward chain, ``limit rate over N/second burst B packets drop``:
whatever exceeds N pps is dropped, and nothing else of the router's is meant to be.

How nftables' packet limit works (``net/netfilter/nft_limit.c``; nft(8), *LIMIT
STATEMENT*; the nftables wiki, *Limits*): a token bucket counted in nanoseconds. Each
packet costs ``c = 1e9 // N`` ns of tokens (integer division, so the rate enforced is
``N_eff = 1e9 / c``, at or a hair above N); tokens accrue at one per nanosecond, up to
a bucket of ``B * c``, i.e. B packets; the bucket starts full, a packet passes when the
bucket holds at least ``c`` and is then charged, and a refused packet costs nothing.
``burst 0`` is not "no burst": the kernel makes it 5, so :class:`Calibration` refuses it.

The truth for a trial of T seconds at L pps (smooth arrivals, a bucket full at the
start: the gaps between trials refill it within ``B / N`` seconds)::

    passed(L)  = min(L*T, N_eff*T + B)                  packets
    loss(L)    = max(0, 1 - (N_eff + B/T) / L)           ratio
    NDR        = N_eff + B/T                             pps (no loss at all up to it)
    PDR@X      = (N_eff + B/T) / (1 - X)                 pps (loss <= X up to it)

So the plain "(L - N)/L <= X" is right but for the burst, which lets B packets more
through per trial: B/T pps more on both answers. Worked example: N = 38,000 pps, B = 380
packets (10 ms at N), T = 2 s: c = 26,315 ns, N_eff = 38,001.14 pps, B/T = 190 pps, so
NDR = 38,191 pps and PDR@0.5% = 38,383 pps, 1.0% above N; with T = 0.5 s (a short
search trial) the burst adds 760 pps. At 2N = 76,000 pps the loss is 49.75%.

The bucket must absorb the arrivals' own bunching, or the limiter drops below N: the
generator sends in batches of 32 and catches up after it was held up (rlgen at 1.05 times
the rate, the XDP generator at 1.5 times; rlgen sent what it owed at once before
2026-12-07), and the router's
CPU serves its input queue (the backlog, or its input veth's ring) in bursts. The default burst is 10 ms at the capacity (at least
64 packets); its effect is in the truth above, not ignored. (With B = 64 at 92,862 pps,
on this project's 2-vCPU VM, the limiter itself dropped 0.3% at 0.9 N and up to 0.8% at
0.97 N: bunched arrivals, not the rate.)
"""

from __future__ import annotations

import json
import math
import numbers
import shutil

from routerlab.defaults import PDR_FRACTION
from routerlab.errors import EngineNotFound, ParameterError
from routerlab.testbed.shell import nsexec, sh
from routerlab.engines.base import register
from routerlab.engines.kernel import Linux

#: Nanoseconds per second: nft_limit's token unit.
NSEC_PER_SEC = 1_000_000_000
#: The default bucket: this many seconds of the capacity...
BURST_S = 0.01
#: ...and at least this many packets (two of the generator's batches of 32).
BURST_MIN = 64
#: The highest capacity accepted, pps (a packet must cost at least 10 ns of tokens).
CAPACITY_MAX = 100_000_000
#: The largest burst nftables takes (a u32).
BURST_MAX = 2**32 - 1


def _whole(name: str, value, lo: int, hi: int, unit: str) -> int:
    """``value`` as an int in [lo, hi], or a ParameterError naming ``name``."""
    ok = (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
          and value == int(value) and lo <= value <= hi)
    if not ok:
        raise ParameterError(name, f"must be a whole number of {unit} in {lo:,}..{hi:,}, got {value!r}")
    return int(value)


@register
class Calibration(Linux):
    """The kernel forwarding behind an nftables limit of ``capacity_pps`` (see the module
    docstring for how the limit works and the truth it gives).

    Parameters
    ----------
    capacity_pps : int
        The rate N the limiter lets through, packets per second (1..100,000,000). Needed
        to run the engine: :meth:`check` with a scenario, and :meth:`start`, refuse it
        missing.
    burst : int, optional
        The bucket B, packets (>= 1; default 10 ms at the capacity, at least 64).
    """

    name = "calibration"
    features = {"routes"}
    where = "nftables (Debian package nftables)"

    def __init__(self, capacity_pps: int | None = None, burst: int | None = None):
        self.capacity_pps = None if capacity_pps is None else _whole("capacity_pps", capacity_pps, 1, CAPACITY_MAX,
                                                                     "packets per second")
        if burst is not None:
            self.burst = _whole("burst", burst, 1, BURST_MAX, "packets")
        elif self.capacity_pps is not None:
            self.burst = max(BURST_MIN, math.ceil(self.capacity_pps * BURST_S))
        else:
            self.burst = None

    def settings(self) -> dict:
        return {"capacity_pps": self.capacity_pps, "burst": self.burst}

    def _capacity(self) -> int:
        if self.capacity_pps is None:
            raise ParameterError("capacity_pps", "the calibration engine needs its capacity in pps: "
                                 "Calibration(capacity_pps=...) in Python, or `routerlab bench calibrate "
                                 "--capacity FRACTION` (a fraction of the generator's ceiling)")
        return self.capacity_pps

    # the truth ------------------------------------------------------------------------
    @property
    def cost_ns(self) -> int:
        """Tokens one packet costs, nanoseconds (the kernel's integer division)."""
        return NSEC_PER_SEC // self._capacity()

    @property
    def rate_pps(self) -> float:
        """The rate the kernel enforces, pps: ``1e9 / cost_ns`` (N or a hair above)."""
        return NSEC_PER_SEC / self.cost_ns

    def passed(self, load_pps: float, duration_s: float) -> float:
        """Packets the limiter lets through in a trial of ``duration_s`` seconds at
        ``load_pps`` pps, starting with a full bucket."""
        return min(load_pps * duration_s, self.rate_pps * duration_s + self.burst)

    def expected_loss(self, load_pps: float, duration_s: float) -> float:
        """The loss ratio of such a trial (in [0, 1))."""
        return 1 - self.passed(load_pps, duration_s) / (load_pps * duration_s)

    def true_ndr(self, duration_s: float) -> float:
        """The NDR of trials of ``duration_s`` seconds, pps: ``N_eff + B/T``."""
        if not duration_s > 0:
            raise ParameterError("duration", f"must be > 0 seconds, got {duration_s!r}")
        return self.rate_pps + self.burst / duration_s

    def true_pdr(self, duration_s: float, fraction: float = PDR_FRACTION) -> float:
        """PDR@X of trials of ``duration_s`` seconds, pps: ``(N_eff + B/T) / (1 - X)``;
        ``fraction`` is X as a ratio (0.005 for PDR@0.5%)."""
        if not 0 < fraction < 1:
            raise ParameterError("pdr", f"must be a fraction in (0, 1), got {fraction!r}")
        return self.true_ndr(duration_s) / (1 - fraction)

    # the engine -----------------------------------------------------------------------
    def check(self, sc=None):
        """As every engine's, and: nft must be there, and a scenario is only run with a
        capacity."""
        if not shutil.which("nft"):
            raise EngineNotFound(f"calibration: nft not found; get it: {self.where}")
        super().check(sc)
        if sc is not None:
            self._capacity()

    def version(self):
        return sh("nft", "--version").strip()

    def ruleset(self) -> str:
        """The limiter: table inet rlcal, counting what it drops (``limited``) and what it
        lets through (``passed``)."""
        return ("table inet rlcal {\n  counter limited { }\n  counter passed { }\n"
                "  chain forward {\n    type filter hook forward priority 0; policy accept;\n"
                f"    limit rate over {self._capacity()}/second burst {self.burst} packets "
                "counter name \"limited\" drop\n"
                "    counter name \"passed\"\n  }\n}\n")

    def start(self, tb, sc):
        ruleset = self.ruleset()  # a missing capacity is refused before the testbed is touched
        facts = super().start(tb, sc)
        nsexec(tb.ns_dut, "nft", "-f", "-", input=ruleset)
        return {**facts, "capacity_pps": self.capacity_pps, "burst_packets": self.burst,
                "enforced_rate_pps": round(self.rate_pps, 3)}

    def queue_packets(self, tb) -> int:
        """The smaller of the router's input queue (the backlog, or its input veth's ring:
        :meth:`Engine.queue_packets`) and the bucket: the packets a stop of the router's
        CPU holds back reach the limiter at once when it runs again, and the bucket passes
        B of them (below the capacity it is full)."""
        return min(super().queue_packets(tb), self.burst)

    def limiter_counts(self, tb) -> dict[str, int]:
        """Packets the limiter has dropped (``limited``) and let through (``passed``) so
        far."""
        counts = {}
        for name in ("limited", "passed"):
            out = json.loads(nsexec(tb.ns_dut, "nft", "-j", "list", "counter", "inet", "rlcal", name))
            counts[name] = next(o["counter"]["packets"] for o in out["nftables"] if "counter" in o)
        return counts

    def drop_counters(self, tb):
        """The limiter's drops (``limited``): the loss this router is meant to have."""
        return {"limited": self.limiter_counts(tb)["limited"]}
