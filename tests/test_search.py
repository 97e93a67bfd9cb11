"""routerlab.measuring.search: the search algorithm against a model router with known thresholds,
and the MLRsearch adapter on the same model. (The model stands in for the testbed so the
algorithm can be checked exactly; real searches are in datasets/.)"""

import pandas as pd
import pytest

from routerlab.measuring import search
from routerlab.errors import ParameterError

CAP, NDR = 300_000, 250_000


def model(load, duration):
    tx = int(load * duration)
    if load <= NDR:
        return tx, tx, False
    if load <= CAP:
        return tx, int(tx * 0.999), False  # 0.1% loss: passes PDR@0.5%, fails NDR
    return tx, int(CAP * duration * 0.99), False


@pytest.mark.parametrize("fn", [search.bisect, search.mlrsearch], ids=["routerlab", "mlrsearch"])
@pytest.mark.parametrize("kind, truth", [("pdr", CAP), ("ndr", NDR)])
def test_search_brackets_the_true_rate(fn, kind, truth):
    r = fn(model, kind=kind, lo=6_000, hi=600_000, precision=0.02, final_duration=1.0)
    assert r.lower <= truth <= r.upper
    assert (r.upper - r.lower) / r.upper <= 0.021
    assert r.trial_seconds == pytest.approx(sum(p.duration for p in r.probes))
    finals = [p for p in r.probes if p.duration == 1.0]
    assert any(p.passed and p.load == pytest.approx(r.lower) for p in finals)


def test_short_answer_that_does_not_hold_is_widened():
    calls = []

    def flaky(load, duration):
        calls.append((load, duration))
        tx = int(load * duration)
        limit = CAP if duration < 1 else 100_000  # long trials reveal a lower capacity
        return tx, tx if load <= limit else tx // 2, False

    r = search.bisect(flaky, kind="pdr", lo=6_000, hi=600_000, final_duration=2.0)
    assert r.lower <= 100_000 <= r.upper and r.precision <= 0.02 * (1 + 1e-9)


def model_of(short_cap, long_cap):
    """A router that carries ``short_cap`` pps in short trials and ``long_cap`` in full ones."""
    def measure(load, d):
        tx = int(load * d)
        return tx, tx if load <= (short_cap if d < 1 else long_cap) else tx // 2, False
    return measure


@pytest.mark.parametrize("short_cap, long_cap", [(300_000, 30_000), (100_000, 90_000), (6_200, 6_000),
                                                 (6_500, 6_050), (1, 300_000)],
                         ids=["long-10x-lower", "long-0.9", "near-lo", "just-above-lo", "short-fails-all"])
def test_whatever_the_short_trials_say_the_answer_is_bracketed_at_full_duration(short_cap, long_cap):
    """The answer passed at full duration, the load above it failed at full duration, and
    they are within the precision: however far the short trials' answer was (widened by
    doubling steps, then bisected again), next to the range's start included."""
    r = search.bisect(model_of(short_cap, long_cap), kind="pdr", lo=6_000, hi=600_000, final_duration=2.0)
    finals = {p.load: p.passed for p in r.probes if p.phase == "final"}
    assert r.lower <= long_cap < r.upper and finals[r.lower] and not finals[r.upper]
    assert r.precision <= 0.02 * (1 + 1e-9)


def test_below_the_range_means_its_start_failed_at_full_duration():
    r = search.bisect(model_of(1, 3_000), kind="pdr", lo=6_000, hi=600_000, final_duration=2.0)
    assert r.lower is None and r.upper == 6_000
    assert [(p.phase, p.load, p.passed) for p in r.probes][-1] == ("final", 6_000, False)


def test_a_precision_or_trial_count_the_search_cannot_work_with_is_refused():
    for bad in ({"precision": 0}, {"precision": 0.5}, {"final_trials": 0}):
        with pytest.raises(ParameterError) as e:
            search.bisect(model, kind="pdr", lo=6_000, hi=600_000, **bad)
        assert e.value.name == next(iter(bad))


def test_generator_limited_trials_never_pass():
    r = search.bisect(lambda load, d: (int(load * d), int(load * d), load > 200_000), kind="pdr",
                      lo=6_000, hi=600_000, final_duration=1.0)
    assert r.limited_by_generator and r.lower <= 200_000 <= r.upper


def test_bad_range_is_named():
    with pytest.raises(ParameterError) as e:
        search.bisect(model, kind="pdr", lo=10, hi=5)
    assert e.value.name == "lo" and str(e.value) == "lo: need 0 < lo < hi, got 10, 5"


def test_whole_range_passing_answers_at_least_the_ceiling():
    r = search.bisect(lambda load, d: (int(load * d), int(load * d), False), kind="pdr", lo=6_000, hi=600_000,
                      final_duration=1.0)
    assert r.lower == 600_000 and r.upper is None


def test_final_loads_pass_on_the_median_trial():
    seq = iter([0.0, 0.02, 0.0] * 100)  # one trial in three loses 2%

    def noisy(load, d):
        tx = int(load * d)
        return tx, int(tx * (1 - next(seq))), False

    r = search.bisect(noisy, kind="pdr", lo=6_000, hi=600_000, final_duration=1.0)
    assert r.lower == 600_000  # two of three trials pass at every load


def test_a_final_load_stops_once_its_answer_is_decided():
    """Two final trials that agree decide a load (two of three); a split takes the third."""
    r = search.bisect(model, kind="pdr", lo=6_000, hi=600_000, final_duration=1.0)
    finals = pd.DataFrame([p for p in r.probes if p.phase == "final"])
    assert (finals.groupby("load").size() == 2).all()  # the model never splits
    calls = {}

    def split(load, d):
        # short trials pass; at full duration each load's first trial loses 2%, the rest nothing
        tx = int(load * d)
        calls[load] = calls.get(load, 0) + (d >= 1)
        return tx, int(tx * 0.98) if calls[load] == 1 and d >= 1 else tx, False

    r = search.bisect(split, kind="pdr", lo=6_000, hi=600_000, final_duration=1.0)
    finals = [p for p in r.probes if p.phase == "final"]
    assert r.lower == 600_000  # the ceiling, confirmed by the third trial
    assert [p.passed for p in finals] == [False, True, True]


def test_ratios_against_mlrsearch_by_hand():
    def res(method, kind, lower, seconds):
        return search.SearchResult(method, kind, lower, lower * 1.02, 0.02, seconds, [], False)

    lines = search.format_ratios([res("routerlab", "pdr", 99_000.0, 30.0), res("mlrsearch", "pdr", 100_000.0, 60.0),
                                  res("routerlab", "ndr", 50_000.0, 20.0)])  # no MLRsearch NDR: no line
    assert lines == ["PDR: routerlab / mlrsearch answer = 0.990, trial-seconds = 0.50"]


def _limited_above(load, d):
    # the router carries 200k; the generator cannot offer more than 500k
    tx = int(load * d)
    return tx, tx if load <= 200_000 else tx // 2, load > 500_000


def test_a_limited_trial_away_from_the_failing_load_does_not_bound_the_answer():
    r = search.bisect(_limited_above, kind="pdr", lo=6_000, hi=600_000, final_duration=1.0)
    assert r.limited_by_generator and not r.generator_bound
    (line,) = search.format_result([r], cpus=2)
    assert line.startswith(f"routerlab PDR: {r.lower:,.0f} pps (next failing {r.upper:,.0f}, width ")
    assert "generator-limited trials at 600,000 pps (not at the failing load: they did not bound the answer)" in line


def test_an_answer_the_generator_bounded_reads_at_least_and_says_the_cpus_are_shared():
    r = search.bisect(lambda load, d: (int(load * d), int(load * d), load > 200_000), kind="pdr",
                      lo=6_000, hi=600_000, final_duration=1.0)
    assert r.generator_bound
    (line,) = search.format_result([r], cpus=2)
    assert line.startswith(f"routerlab PDR: at least {r.lower:,.0f} pps (limited by the generator); ")
    assert "share this machine's 2 CPUs" in line and "next failing" not in line
    assert "share" not in search.format_result([r], cpus=8)[0]


def test_the_committed_searches_say_what_bounded_them():
    """Each answer of testbed-click's searches, as read_searches shows it, recomputed from
    the search's own trials: bound by the generator exactly when a trial at the failing
    load (or, when no load failed, any trial) was generator-limited, and then never a plain
    number."""
    from routerlab.analysis import datasets

    folder = datasets.datasets_dir() / "testbed-click"
    s = datasets.read_searches([folder])
    trials = pd.read_csv(folder / "search_trials.csv")
    for r in s.itertuples():
        mine = trials[(trials["experiment"] == r.experiment) & (trials["kind"] == r.kind)
                      & (trials["method"] == r.method)]
        at_upper = mine if pd.isna(r.upper_pps) else mine[mine["load"] == r.upper_pps]
        bound = bool(at_upper["generator_limited"].any())
        assert r.generator_bound == bound, r.experiment
        assert not bound or r.limited_by_generator  # a bound search saw a limited trial
        want = ("below the search range" if pd.isna(r.lower_pps)
                else f"at least {r.lower_pps:,.0f} pps (limited by the generator)" if bound
                else f"at least {r.lower_pps:,.0f} pps (passed at the ceiling)" if pd.isna(r.upper_pps)
                else f"{r.lower_pps:,.0f} pps")
        assert r.answer == want
    pdr = datasets.search_pdr(s).set_index("engine")
    # a lower bound, for whatever reason, is never a router's own answer
    assert (pdr["at_least"] == (pdr["generator_bound"] | (pdr["bound"] == "passed at the ceiling"))).all()
    assert set(pdr["bound"]) <= {"", "limited by the generator", "passed at the ceiling"}


def test_no_ratio_is_set_against_a_pdr_that_nothing_failed_below_the_ceiling():
    import pandas as pd

    from routerlab.analysis import datasets
    from routerlab.analysis import microbench as forwarding

    searches = pd.DataFrame({"engine": ["linux", "click", "fastclick-dpdk"], "kind": "pdr", "method": "routerlab",
                             "lower_pps": [369_542.0, 142_456.0, 266_197.0],
                             "upper_pps": [float("nan"), 144_008.0, 269_096.0],
                             "generator_bound": [False, False, True]})
    pdr = datasets.search_pdr(searches)
    raw = pd.DataFrame({"engine": ["click"], "mpps": [3.9], "instructions_per_packet": [1494.0]})
    ours, _, _ = forwarding.summary(raw, pdr)
    tb = ours[ours["where"] == "testbed (PDR@0.5%)"].set_index("engine")
    # linux's "at least the ceiling" is not the fastest: click is, the fastest whose PDR is the router's own
    assert tb.loc["click", "ratio_to_fastest"] == 1.0
    assert tb.loc[["linux", "fastclick-dpdk"], "ratio_to_fastest"].isna().all()
    assert tb["bound"].to_dict() == {"linux": "passed at the ceiling", "click": "",
                                     "fastclick-dpdk": "limited by the generator"}


def test_bench_engines_sets_no_ratio_against_a_pdr_the_generator_bounded():
    import pandas as pd

    from routerlab.benchmarks import engines

    df = pd.DataFrame({"engine": ["linux", "click", "fastclick-dpdk"], "pdr_pps": [120_000.0, 160_000.0, 330_000.0],
                       "generator_bound": [False, False, True]})
    assert engines.ratios(df)["ratio_to_first"].tolist()[:2] == [1.0, pytest.approx(4 / 3)]
    assert pd.isna(engines.ratios(df)["ratio_to_first"].iloc[2])
    assert engines.ratios(df.assign(generator_bound=[True, False, False]))["ratio_to_first"].isna().all()


def test_without_mlrsearch_the_commands_that_need_it_stop_in_one_line(monkeypatch):
    """After a plain `pip install routerlab`, MLRsearch (an extra) is absent: bench search
    and bench calibrate say which extra to install before measuring anything."""
    import importlib.util

    from click.testing import CliRunner

    from routerlab.measuring import measurement
    from routerlab.cli.app import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "MLRsearch" else real(name, *a))
    monkeypatch.setattr(measurement, "measure", lambda *a, **k: pytest.fail("measured without MLRsearch"))
    for args in (["bench", "search"], ["bench", "calibrate"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 1, r.output
        text = r.stderr.strip()
        assert "pip install 'routerlab[mlrsearch]'" in text and "Traceback" not in text and len(text.splitlines()) == 1
    from routerlab.benchmarks import calibrate

    def reached(*a, **k):
        raise RuntimeError("calibrate.run reached")
    monkeypatch.setattr(calibrate, "run", reached)
    r = CliRunner().invoke(app, ["bench", "calibrate", "--method", "routerlab"])
    assert "calibrate.run reached" in str(r.exception)  # not needed without the method


def test_bench_engines_prints_the_chains_target():
    """The ceiling over the best PDR, next to the target, and the answers the generator bounded."""
    from routerlab.benchmarks import engines

    df = engines.ratios(pd.DataFrame({"engine": ["linux", "ebpf"], "scenario": "single-flow",
                                      "pdr_pps": [700_000.0, 2_000_000.0], "generator_bound": [False, True]}))
    last = engines.report(5_000_000, df).splitlines()[-1]
    # the bounded 2,000,000 is not the best answer: 700,000 is
    assert last == ("ceiling / best PDR: 7.14x (target: at least 2x); "
                    "answers bounded by the generator: 1 (target: 0)")
    none = df.assign(pdr_pps=[float("nan"), 2_000_000.0])
    assert "ceiling / best PDR: none (no engine's own answer)" in engines.report(5_000_000, none)
