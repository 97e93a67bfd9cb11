"""``bench generators``: how precisely the XDP generator, rlgen, trafgen and tcpreplay hit a
requested rate, and the ceilings of the two of ours."""

from __future__ import annotations

import time


def _run_external(tb, gen: str, rate: float, duration: float, workdir) -> tuple[int, float]:
    """Run trafgen or tcpreplay at ``rate`` pps for ``duration`` s; returns (kernel-counted
    packets offered, wall seconds)."""
    import subprocess
    from pathlib import Path

    from routerlab.testbed.namespaces import NamespaceTestbed
    from routerlab.testbed.traffic import udp_frame, write_pcap

    # rlgen's single-flow frame, on the direct wire (the sink holds 10.70.1.1)
    frame = udp_frame(NamespaceTestbed.mac(tb.ns_tg, tb.tg_if), NamespaceTestbed.mac(tb.ns_sink, tb.sink_if), "10.70.1.2", "10.70.1.1")
    n = int(rate * duration)
    workdir = Path(workdir)
    if gen == "trafgen":
        conf = workdir / "frame.cfg"
        conf.write_text("{ " + ", ".join(f"0x{b:02x}" for b in frame) + " }\n")
        cmd = ["trafgen", "--dev", tb.tg_if, "--conf", str(conf), "--rate", f"{int(rate)}pps",
               "--num", str(n), "--cpus", "1", "--no-sock-mem"]
    else:
        pcap = workdir / "frame.pcap"
        write_pcap(pcap, [frame])
        cmd = ["tcpreplay", "-q", "-i", tb.tg_if, f"--pps={rate:.0f}", f"--loop={n}", "--preload-pcap", str(pcap)]
    k0 = tb.tx_counters()
    t0 = time.perf_counter()
    p = tb.spawn(tb.ns_tg, *cmd, cpu=tb.gen_cpu, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=duration * 5 + 30)
    wall = time.perf_counter() - t0
    tb.procs.remove(p)
    k1 = tb.tx_counters()
    if p.returncode != 0:
        raise RuntimeError(f"{gen} failed: {err.strip()[:300]}")
    return (k1["tx_packets"] - k0["tx_packets"]) + (k1["tx_dropped"] - k0["tx_dropped"]), wall


def run(duration: float = 2.0, fractions=(0.25, 0.5, 0.75, 1.0), runs: int = 3,
        candidates=("rlgen", "xdp", "trafgen", "tcpreplay")):
    """How precisely each generator hits a requested rate, open loop, into the sink.

    The ceiling is rlgen's own (as fast as it can, wired straight to the sink); rlgen,
    trafgen and tcpreplay are then asked for fractions of it. The achieved rate is counted
    by the kernel (packets put on the wire or refused by the sink, per wall-clock second of
    the generator's run), so every candidate is measured the same way, side by side.

    The XDP generator (:mod:`routerlab.testbed.xdpgen`) has a ceiling of its own, measured the same
    way (as fast as it can, for ``duration``, on a testbed of its own: the trials' XDP sink
    on the sink's CPU, which is the generator's), and is asked for fractions of it; its
    frames are counted where they arrive, by the XDP sink, over the span from its first
    frame to its last.

    Returns
    -------
    (float, pandas.DataFrame)
        rlgen's ceiling (pps) and one row per trial: generator, fraction, requested_pps,
        achieved_pps, rate_error (achieved / requested - 1), late_ms (the XDP generator's
        worst lateness behind its schedule). The XDP generator's ceiling is its row at
        fraction 0 (requested_pps 0), one per run.
    """
    import shutil
    import tempfile

    import pandas as pd

    from routerlab.testbed import traffic
    from routerlab.testbed.namespaces import NamespaceTestbed

    rows = []
    if "xdp" in candidates:
        with NamespaceTestbed(direct=True, generator="xdp") as tb:
            rows += _xdp_rows(tb, duration, fractions, runs)
    with NamespaceTestbed(direct=True, generator="rlgen") as tb, tempfile.TemporaryDirectory() as work:
        ceil = sorted(traffic.run_trial(tb, 0, duration, traffic.TrafficSpec()).sent_pps for _ in range(3))[1]
        for frac in fractions:
            rate = frac * ceil
            for gen in candidates:
                if gen == "xdp" or (gen != "rlgen" and not shutil.which(gen)):
                    continue
                for k in range(runs):
                    if gen == "rlgen":
                        r = traffic.run_trial(tb, rate, duration, traffic.TrafficSpec())
                        achieved = r.kernel_tx / duration
                    else:
                        offered, wall = _run_external(tb, gen, rate, duration, work)
                        achieved = offered / wall
                    rows.append({"generator": gen, "fraction": frac, "trial": k, "requested_pps": rate,
                                 "achieved_pps": achieved, "rate_error": achieved / rate - 1})
    return ceil, pd.DataFrame(rows)


def _xdp_rows(tb, duration: float, fractions, runs: int) -> list[dict]:
    """The XDP generator's ceiling (``runs`` runs as fast as it can; the median is its
    ceiling), then ``runs`` runs at each fraction of it, counted by the XDP sink."""
    from routerlab.testbed import traffic

    if tb.generator != "xdp":  # the machine cannot run it: said once by the testbed
        return []

    def one(rate, frac, k):
        r = traffic.run_trial(tb, rate, duration, traffic.TrafficSpec(), probe_period_ms=None)
        span = r.tx / r.sent_pps if r.sent_pps else 0.0
        achieved = r.rx / span if span else 0.0
        return {"generator": "xdp", "fraction": frac, "trial": k, "requested_pps": rate, "achieved_pps": achieved,
                "rate_error": achieved / rate - 1 if rate else float("nan"), "late_ms": r.gen_late_ms}
    rows = [one(0, 0.0, k) for k in range(runs)]
    ceiling = sorted(r["achieved_pps"] for r in rows)[len(rows) // 2]
    return rows + [one(frac * ceiling, frac, k) for frac in fractions for k in range(runs)]


def report(ceil: float, df) -> str:
    """Each generator's ceiling, and its median rate error per fraction of the ceiling it
    was asked for (rlgen's for rlgen, trafgen and tcpreplay; the XDP generator's own for it)."""
    paced = df[df["fraction"] > 0]
    tab = (paced.groupby(["generator", "fraction"])["rate_error"].median().unstack("fraction") * 100)
    tab.columns = [f"{c:.0%} of ceiling" for c in tab.columns]
    lines = [f"generator ceiling (rlgen, straight into the sink): {ceil:.0f} pps"]
    xdp = df[(df["generator"] == "xdp") & (df["fraction"] == 0)]
    if len(xdp):
        x = xdp["achieved_pps"].median()
        late = df[(df["generator"] == "xdp") & (df["fraction"] > 0)]["late_ms"]
        lines.append(f"XDP generator's ceiling (live frames, into the XDP sink): {x:.0f} pps = {x / ceil:.1f}x rlgen's"
                     + (f"; its worst lateness when paced: {late.max():.2f} ms" if len(late) else ""))
    lines += ["median rate error, % (achieved / requested - 1), counted by the kernel (xdp: by the XDP sink):",
              tab.round(2).to_string()]
    return "\n".join(lines)
