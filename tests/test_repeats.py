"""Answers with their spread (routerlab.analysis.repeats): the median and range of repeated
searches against worked examples, rankings that hold only where the repeats separate
(on the limiter's model and on a real testbed with a router whose capacity alternates
between runs), resumed repeats, and the reports' rankings and sweep-against-search lines."""

import math

import pandas as pd
import pytest
from conftest import ROOT, engine_marks

from routerlab.analysis import repeats, stats
from routerlab.analysis.repeats import Repeated
from routerlab.analysis.scenarios import Scenario
from routerlab.engines.calibration import Calibration
from routerlab.errors import ParameterError
from routerlab.measuring import measurement, search

needs_nft, on_testbed = engine_marks("nftables (the calibration router)", lambda: Calibration().check())


# -- one answer, repeated ----------------------------------------------------------------------

def test_the_answer_is_the_median_with_the_range_interval_and_spread():
    a = Repeated((100_000, 110_000, 104_000))
    assert a.n == 3 and a.median == 104_000 and (a.low, a.high) == (100_000, 110_000)
    assert a.spread == pytest.approx(1.1)
    # mean 104,666.7, sd 5,033.2, t(0.975, 2) = 4.3027: half-width 12,503.4
    lo, hi = a.interval
    assert (lo + hi) / 2 == pytest.approx(104_666.67, abs=0.01)
    assert (hi - lo) / 2 == pytest.approx(4.302653 * 5033.223 / math.sqrt(3), rel=1e-5)
    assert a.words() == "104,000 pps (median; 100,000 to 110,000 over 3 repeats)"


def test_one_repeat_has_no_spread_and_ranks_nothing():
    a, b = Repeated((500_000,)), Repeated((100_000,))
    assert math.isnan(a.spread) and all(math.isnan(x) for x in a.interval)
    assert a.words() == "500,000 pps (one repeat)"
    assert repeats.separated(a, b) == 0
    assert repeats.order({"a": a, "b": b}) == "a ≈ b"


def test_a_lower_bound_stays_a_lower_bound_and_nothing_ranks_above_it():
    bounded = Repeated((900_000, 950_000, 920_000), at_least=(False, True, False))
    assert bounded.lower_bound and bounded.high == math.inf
    assert bounded.words().startswith("at least 920,000 pps")
    # every repeat of the other engine is above every answer of the bounded one, yet the
    # bounded one may carry more: a tie
    above = Repeated((1_000_000, 1_010_000, 1_005_000))
    assert repeats.separated(above, bounded) == 0
    # it still ranks above an engine below its lowest repeat
    assert repeats.separated(bounded, Repeated((400_000, 410_000, 405_000))) == 1


def test_ranks_are_shared_by_ties_and_counted_from_the_separated_above():
    a = Repeated((10, 11, 12))
    b = Repeated((11.5, 13, 14))   # overlaps a and c
    c = Repeated((13.5, 15, 16))   # above a, overlaps b
    t = repeats.rank({"a": a, "b": b, "c": c}).set_index("label")
    assert list(t.index) == ["c", "b", "a"]
    assert t.loc["c", "rank"] == 1 and t.loc["b", "rank"] == 1 and t.loc["a", "rank"] == 2
    assert t.loc["b", "ties"] == "c, a" and t.loc["a", "ties"] == "b"
    # c and a tie with b between them, yet c is above a: said across the tie
    assert repeats.order({"a": a, "b": b, "c": c}) == "c ≈ b ≈ a (c > a)"


# -- rankings from real searches on the limiter's model ----------------------------------------

def _searched(capacities, seed_kind="pdr"):
    """Our search (search.bisect), once per capacity, on the limiter's arithmetic: a router
    whose capacity is each of ``capacities`` in turn, one per run."""
    out = []
    for i, cap in enumerate(capacities):
        eng = Calibration(capacity_pps=cap)

        def measure(load, duration, eng=eng):
            return round(load * duration), math.floor(eng.passed(load, duration)), False

        r = search.bisect(measure, kind=seed_kind, lo=3_000, hi=300_000, precision=0.02, final_duration=1.0)
        r.repeat = i
        out.append(r)
    return search.repeated(out)[(seed_kind, "routerlab")]


def test_a_router_whose_capacity_alternates_between_runs_ties_with_a_steady_one_between():
    alternating = _searched([20_000, 40_000, 20_000])
    steady = _searched([30_000] * 3)
    assert alternating.median < steady.median  # one search each would rank them: by chance
    assert repeats.separated(steady, alternating) == 0
    t = repeats.rank({"alternating": alternating, "steady": steady})
    assert list(t["rank"]) == [1, 1] and repeats.order({"alternating": alternating, "steady": steady}) == \
        "steady ≈ alternating"


def test_steady_routers_of_different_capacity_are_ranked():
    fast, slow = _searched([40_000] * 3), _searched([30_000] * 3)
    assert repeats.separated(fast, slow) == 1
    assert repeats.order({"slow": slow, "fast": fast}) == "fast > slow"
    assert list(repeats.rank({"slow": slow, "fast": fast})["rank"]) == [1, 2]


# -- the searches' files -----------------------------------------------------------------------

def test_a_sweep_is_refused_repeats_and_a_search_a_bad_count():
    with pytest.raises(ParameterError, match="repeats"):
        measurement.check(loads_frac="0.1", repeats=3)
    with pytest.raises(ParameterError, match="repeats"):
        measurement.check(search="pdr", repeats=0)
    assert measurement.check(search="pdr", repeats=2) is not None


def _results(rows):
    cols = ["experiment", "engine", "scenario", "repeat", "method", "kind", "lower_pps", "upper_pps",
            "limited_by_generator", "generator_ceiling_pps", "generator_bound"]
    return pd.DataFrame(rows, columns=cols)


def test_searches_read_back_make_one_answer_per_experiment_and_keep_lower_bounds():
    res = _results([
        ("a", "linux", "single-flow", 0, "routerlab", "pdr", 800_000, 810_000, False, 5e6, False),
        ("a", "linux", "single-flow", 1, "routerlab", "pdr", 900_000, 910_000, False, 5e6, False),
        ("a", "linux", "single-flow", 2, "routerlab", "pdr", 850_000, 860_000, False, 5e6, False),
        ("b", "ebpf", "single-flow", 0, "routerlab", "pdr", 4_000_000, float("nan"), True, 5e6, True),
        ("b", "ebpf", "single-flow", 1, "routerlab", "pdr", 3_900_000, 3_950_000, False, 5e6, False),
    ])
    one = repeats.from_searches(res).set_index("experiment")
    assert one.loc["a", "median_pps"] == 850_000 and one.loc["a", "repeats"] == 3
    assert one.loc["a", "spread"] == pytest.approx(900 / 800)
    assert not one.loc["a", "at_least"] and one.loc["b", "at_least"]
    assert one.loc["b", "words"].startswith("at least 3,950,000 pps")


def test_the_sweep_and_the_search_agree_where_their_ranges_meet_and_say_which_side_otherwise():
    search_ = Repeated((449_872, 455_000, 452_000), uppers=(454_771, 460_000, 456_000))
    agree, words = repeats.sweep_against_search(stats.RateBound(775_014, "at_least_max"), None, search_)
    assert not agree and "no load failed" in words and "fails below the sweep's PDR" in words
    agree, words = repeats.sweep_against_search(stats.RateBound(400_000, "found"), 500_000, search_)
    assert agree and "disagree" not in words
    agree, words = repeats.sweep_against_search(stats.RateBound(300_000, "found"), 400_000, search_)
    assert not agree and "passes above the sweep's failing load" in words


# -- on a real testbed -------------------------------------------------------------------------

class Alternating(Calibration):
    """The calibration router with a capacity that takes the next of ``capacities`` at
    every start: a router whose capacity moves between runs."""

    def __init__(self, capacities):
        super().__init__(capacity_pps=capacities[0])
        self.capacities, self.starts = list(capacities), 0

    def start(self, tb, sc):
        cap = self.capacities[self.starts % len(self.capacities)]
        self.starts += 1
        self.capacity_pps, self.burst = cap, max(64, math.ceil(cap * 0.01))
        return super().start(tb, sc)


@needs_nft
@on_testbed
def test_on_the_testbed_repeats_start_the_router_again_and_rank_only_what_separates(tmp_path):
    """Each repeat is a fresh testbed with the engine started again; the alternating
    router ties with a steady one between its capacities, two steady ones rank. Short:
    0.5-s final trials, 10% precision; run it under the testbed lock."""
    sc = Scenario(name="single-flow")
    answers = {}
    for name, caps in (("alternating", [15_000, 45_000]), ("steady", [30_000]), ("slow", [12_000])):
        eng = Alternating(caps)
        res = search.run_search(eng, sc, tmp_path, kind="pdr", ceiling_pps=120_000, final_duration=0.5,
                                precision=0.1, final_trials=1, repeats=2, experiment=name)
        assert eng.starts == 2 and [r.repeat for r in res] == [0, 1]
        answers[name] = search.repeated(res)[("pdr", "routerlab")]
    assert answers["alternating"].spread > 2  # it moved with its capacity
    assert repeats.separated(answers["steady"], answers["alternating"]) == 0
    assert repeats.separated(answers["steady"], answers["slow"]) == 1
    written = pd.read_csv(tmp_path / "search_results.csv")
    assert sorted(written.loc[written["experiment"] == "steady", "repeat"]) == [0, 1]
    # resumed: the repeats there are kept, only the missing one is searched
    eng = Alternating([30_000])
    res = search.run_search(eng, sc, tmp_path, kind="pdr", ceiling_pps=120_000, final_duration=0.5,
                            precision=0.1, final_trials=1, repeats=3, experiment="steady", resume=True)
    assert eng.starts == 1 and [r.repeat for r in res] == [0, 1, 2]
    assert [r.lower for r in res[:2]] == [r for r in written.loc[written["experiment"] == "steady", "lower_pps"]]
    assert res[0].probes, "a resumed repeat is read back with its trials"


# -- what moved with a spread, and bench repeat's searches ------------------------------------

def _repeats_of(answers, step):
    """search_results.csv of one search's repeats: each answer, and its failing load ``step``
    times higher."""
    return pd.DataFrame({"experiment": "e", "engine": "ebpf", "scenario": "single-flow", "kind": "pdr",
                         "method": "routerlab", "repeat": range(len(answers)), "lower_pps": answers,
                         "upper_pps": [a * step for a in answers], "limited_by_generator": False,
                         "generator_ceiling_pps": 6e6})


def _repeated_search(answers, speeds, napi, memory=None, distance=None):
    res = _repeats_of(answers, 1.01)
    rows = []
    memory = memory or [20.0] * len(answers)
    distance = distance or [60.0] * len(answers)
    for i, (a, sp, n, m, d) in enumerate(zip(answers, speeds, napi, memory, distance)):
        for load, dur in ((a * 2, 0.5), (a, 1.0), (a, 1.0), (a * 1.01, 1.0)):
            rows.append({"experiment": "e", "engine": "ebpf", "scenario": "single-flow", "kind": "pdr",
                         "method": "routerlab", "repeat": i, "load": load, "duration": dur, "tx": 100, "rx": 100,
                         "generator_limited": False, "cpu_speed": sp, "napi_ns_per_packet": n, "memory_ns": m,
                         "cpu_distance_ns": d, "steal": 0.0})
    return res, pd.DataFrame(rows)


def test_explain_names_the_quantity_that_moved_with_the_answer_and_whose_it_is():
    answers = [2.0e6, 4.1e6, 3.9e6, 4.2e6, 3.0e6]
    # the router's own time per packet follows the answer inversely; the CPU's speed does not
    res, trials = _repeated_search(answers, speeds=[900, 905, 898, 902, 901], napi=[500, 240, 250, 235, 330])
    t = repeats.explain(res, trials)
    top = t.iloc[0]
    assert top["field"] == "napi_ns_per_packet" and top["rho"] == pytest.approx(-1.0) and top["moves"]
    assert top["effect"] == pytest.approx(500 / 235 - 1)
    assert not top["machine"] and (top["at_lowest"], top["at_highest"]) == (500, 235)
    assert not t.set_index("field").loc["cpu_speed", "moves"]
    assert "steal" not in set(t["field"])  # it did not move at all: nothing to set against
    # the time per packet restates the answer at a full CPU: how it moved, not why
    assert top["consequence"] and repeats.cause_words(t).startswith("no recorded cause moved with the answer")
    assert "(how the answer moved, not why)" in repeats.cause_words(t)
    # the shared cache slower in the low repeats: the machine's
    res, trials = _repeated_search(answers, speeds=[900] * 5, napi=[500, 240, 250, 235, 330],
                                   memory=[60, 21, 25, 20, 40])
    words = repeats.cause_words(repeats.explain(res, trials))
    assert words.startswith("moved with the answer: the time of a load from the shared cache (ns), ρ = -1.00: 60 in "
                            "the lowest repeat, 20 in the highest (the machine's)")
    # the two virtual CPUs farther apart in the low repeats: the machine's
    res, trials = _repeated_search(answers, speeds=[900] * 5, napi=[500, 240, 250, 235, 330],
                                   distance=[210, 62, 65, 60, 150])
    words = repeats.cause_words(repeats.explain(res, trials))
    assert words.startswith("moved with the answer: the round trip of a cache line between the router's and the "
                            "generator's CPUs (ns), ρ = -1.00: 210 in the lowest repeat, 60 in the highest "
                            "(the machine's)"), words
    # when the machine's speed moves with it, the words say it is the machine's
    res, trials = _repeated_search(answers, speeds=[450, 905, 880, 910, 650], napi=[300] * 5)
    assert "(the machine's)" in repeats.cause_words(repeats.explain(res, trials))
    # three repeats are too few to say what moved
    res, trials = _repeated_search(answers[:3], speeds=[600, 905, 880], napi=[300, 200, 210])
    assert not repeats.explain(res, trials)["moves"].any()


def test_explain_reads_a_repeat_at_the_trials_that_passed_its_answer():
    """The host moves the virtual CPUs within a repeat: what counts is where they were while
    the answer passed, not in the repeat's other trials (there the opposite, here)."""
    answers = [2.0e6, 4.1e6, 3.9e6, 4.2e6, 3.0e6]
    at_answer = [330, 90, 95, 85, 320]
    res, trials = _repeated_search(answers, speeds=[900] * 5, napi=[300] * 5)
    answer_of = dict(enumerate(answers))
    elsewhere = trials[(trials["duration"] == 1.0) & (trials["load"] != trials["repeat"].map(answer_of))]
    trials = pd.concat([trials, elsewhere, elsewhere], ignore_index=True)  # most full-length trials ran elsewhere
    passed = trials["load"] == trials["repeat"].map(answer_of)
    trials["cpu_distance_ns"] = [d if ok else 400 - d for d, ok in
                                 zip(trials["repeat"].map(dict(enumerate(at_answer))), passed)]
    row = repeats.explain(res, trials).set_index("field").loc["cpu_distance_ns"]
    assert row["moves"] and row["rho"] == pytest.approx(-1.0) and (row["at_lowest"], row["at_highest"]) == (330, 85)


def test_bench_repeat_reports_each_searchs_spread_against_its_goal_and_its_cause(tmp_path):
    from routerlab.benchmarks import repeat

    answers = [2.0e6, 4.1e6, 3.9e6, 4.2e6, 3.0e6]
    res, trials = _repeated_search(answers, speeds=[900] * 5, napi=[500, 240, 250, 235, 330],
                                   memory=[60, 21, 25, 20, 40])
    steady = res.assign(experiment="f", engine="linux", lower_pps=[1.00e6, 1.02e6, 1.01e6, 1.03e6, 1.0e6])
    pd.concat([res, steady]).to_csv(tmp_path / "search_results.csv", index=False)
    pd.concat([trials, trials.assign(experiment="f", engine="linux")]).to_csv(tmp_path / "search_trials.csv",
                                                                             index=False)
    text = repeat.search_report(repeat.searches(tmp_path))
    lines = text.splitlines()
    assert lines[0].startswith("e (PDR, routerlab): 3,900,000 pps (median; 2,000,000 to 4,200,000 over 5 repeats)")
    assert "highest / lowest 2.100 (goal: at most 1.1) ABOVE THE GOAL" in lines[0]
    assert "the time of a load from the shared cache" in lines[1] and "(the machine's)" in lines[1]
    assert "highest / lowest 1.030 (goal: at most 1.1)" in lines[2] and "ABOVE" not in lines[2]
    assert lines[-1].startswith("spread within the goal: 1 of 2; of the 1 above it, 1 with a recorded quantity")


def test_a_campaigns_searches_alone_repeated_and_nothing_else(tmp_path):
    from routerlab.publish import campaign

    c = campaign.load(ROOT / "datasets" / "testbed-veth" / "campaign.yaml")
    only = campaign.searches_only(c, 5)
    assert [s.name for s in only.steps] == ["measure"] * 6 + ["bench engines"]
    assert all(s.options["repeats"] == 5 and ("search" in s.options or s.name != "measure") for s in only.steps)
    assert [s.number for s in only.steps] == list(range(1, 8)) and only.sha256 != c.sha256
    # its text is a campaign file that reads back the same
    (tmp_path / "campaign.yaml").write_bytes(only.text)
    again = campaign.load(tmp_path / "campaign.yaml")
    assert [s.options for s in again.steps] == [s.options for s in only.steps] and again.ceiling
    with pytest.raises(ParameterError, match="no search step"):
        campaign.searches_only(campaign.load(ROOT / "datasets" / "microbench" / "campaign.yaml"), 3)


def test_repeats_below_the_search_range_are_never_shown_as_zero_and_bounds_get_no_interval():
    some = Repeated((float("nan"), 300_000, 320_000))
    assert some.median == 300_000 and math.isnan(some.spread) and all(math.isnan(x) for x in some.interval)
    assert some.words() == "300,000 pps (median; below the search range to 320,000 over 3 repeats)"
    most = Repeated((float("nan"), float("nan"), 320_000))
    assert math.isnan(most.median)
    assert most.words() == "below the search range (median; 2 of 3 repeats below it, the highest 320,000 pps)"
    assert Repeated((float("nan"),) * 3).words() == "below the search range (all 3 repeats)"
    # below the range ranks below anything measured
    assert repeats.separated(Repeated((100_000, 110_000)), Repeated((float("nan"), float("nan")))) == 1
    bound = Repeated((900_000, 950_000), at_least=(False, True))
    assert all(math.isnan(x) for x in bound.interval)


def test_a_spread_whose_lowest_repeat_is_a_lower_bound_is_not_the_routers():
    # the lowest repeat stopped where the generator could not keep up: the router may carry more
    gen = Repeated((1_222_935, 1_299_528, 1_380_822), at_least=(True, True, False),
                   uppers=(1_250_000, 1_330_000, 1_410_000))
    assert gen.lowest_bound_reason == "limited by the generator"
    words = repeats.cause_words(pd.DataFrame(), None, gen)
    assert words.startswith(repeats.LOWEST_BOUND + " (limited by the generator, at 1,222,935 pps)"), words
    # the lowest passed at the ceiling: no failing load above it
    assert Repeated((1.0e6, 1.2e6), at_least=(True, False), uppers=(float("nan"), 1.3e6)).lowest_bound_reason == \
        "passed at the ceiling"
    # a lower bound elsewhere leaves an exact lowest repeat the router's own, and so does an
    # exact repeat that shares the lowest answer with a bound
    exact_low = Repeated((1.0e6, 1.2e6), at_least=(False, True), uppers=(1.1e6, 1.3e6))
    shared = Repeated((1.0e6, 1.0e6, 1.2e6), at_least=(True, False, False), uppers=(1.1e6, 1.1e6, 1.3e6))
    for a in (exact_low, shared, Repeated((1.0e6, 1.2e6))):
        assert a.lowest_bound_reason == "" and not repeats.cause_words(pd.DataFrame(), None, a).startswith(
            repeats.LOWEST_BOUND)
    # one repeat has no spread to explain
    assert Repeated((1.0e6,), at_least=(True,), uppers=(1.1e6,)).lowest_bound_reason == ""
    # read from search results: the generator may bound a repeat where no load failed, and
    # the reason is then the generator's, as the answer's own words say
    rows = _repeats_of([1.0e6, 1.2e6, 1.1e6], 1.01).assign(generator_bound=[True, False, False])
    for upper in (1.01e6, float("nan")):
        rows.loc[0, "upper_pps"] = upper
        a = repeats.from_searches(rows)["answer"].iloc[0]
        assert a.lowest_bound_reason == "limited by the generator" and a.words().startswith("at least")
    # and where it did not, a repeat with no failing load passed at the ceiling
    a = repeats.from_searches(rows.assign(generator_bound=False))["answer"].iloc[0]
    assert a.lowest_bound_reason == "passed at the ceiling"
    # tied at the lowest, one bound for each reason: both said
    tied = Repeated((1.0e6, 1.0e6, 1.2e6), at_least=(True, True, False), uppers=(float("nan"), float("nan"), 1.3e6),
                    generator=(True, False, False))
    assert tied.lowest_bound_reason == "limited by the generator or passed at the ceiling"


def test_bench_repeat_counts_the_spreads_whose_lowest_repeat_the_generator_bounded(tmp_path):
    from routerlab.benchmarks import repeat

    answers = [2.0e6, 4.1e6, 3.9e6, 4.2e6, 3.0e6]
    res, trials = _repeated_search(answers, speeds=[900] * 5, napi=[500, 240, 250, 235, 330])
    # the lowest repeat's failing load: a trial the generator could not keep up in
    trials.loc[(trials["repeat"] == 0) & (trials["load"] == answers[0] * 1.01), "generator_limited"] = True
    res.assign(trial_seconds=4.5).to_csv(tmp_path / "search_results.csv", index=False)
    trials.to_csv(tmp_path / "search_trials.csv", index=False)
    lines = repeat.search_report(repeat.searches(tmp_path)).splitlines()
    assert lines[0].startswith("e (PDR, routerlab): at least 3,900,000 pps") and "ABOVE THE GOAL" in lines[0]
    assert lines[1].strip().startswith(repeats.LOWEST_BOUND + " (limited by the generator, at 2,000,000 pps)")
    assert lines[-1].startswith("spread within the goal: 0 of 1; of the 1 above it, 0 with a recorded quantity")
    assert lines[-1].endswith("1 whose lowest repeat is only a lower bound (the generator's limit or the ceiling, not "
                              "the router's answer)"), lines[-1]
    # and the dataset's report says it where it lists the spreads above the goal
    from routerlab.publish import facts
    assert facts.searches(tmp_path)["e"]["pdr"]["routerlab"]["spread_cause"].startswith(repeats.LOWEST_BOUND)
    # the same repeats with the generator keeping up: the router's own answers, and the
    # words say what moved with them
    trials["generator_limited"] = False
    trials.to_csv(tmp_path / "search_trials.csv", index=False)
    lines = repeat.search_report(repeat.searches(tmp_path)).splitlines()
    assert "the router's NAPI time per packet (ns) went from 235 in the highest repeat to 500" in lines[1], lines[1]
    assert not lines[1].strip().startswith(repeats.LOWEST_BOUND) and lines[-1].endswith("0 whose lowest repeat is "
                                                                                        "only a lower bound (the "
                                                                                        "generator's limit or the "
                                                                                        "ceiling, not the router's "
                                                                                        "answer)")


def test_a_resumed_search_is_one_searched_the_same_way(tmp_path):
    """_finished keeps only repeats searched with the same kind, methods, PDR fraction,
    ceiling, precision and final trials; anything else is searched again."""
    rows = [{"experiment": "e", "engine": "linux", "scenario": "single-flow", "repeat": i, "method": "routerlab",
             "kind": "pdr", "lower_pps": 1000.0 + i, "upper_pps": 1010.0 + i, "precision": 0.01,
             "trial_seconds": 10.0, "trials": 12, "final_trials": 3, "target_precision": 0.02,
             "final_trial_s": 1.0, "limited_by_generator": False, "generator_ceiling_pps": 5_000_000, "pdr": 0.005}
            for i in range(2)]
    pd.DataFrame(rows).to_csv(tmp_path / "search_results.csv", index=False)
    same = dict(wanted={("pdr", "routerlab")}, ceiling=5_000_000.0, precision=0.02, final_duration=1.0,
                final_trials=3, pdr=0.005)
    done = search._finished(tmp_path, "e", **same)
    assert sorted(done) == [0, 1] and done[1][0].lower == 1001.0 and done[1][0].repeat == 1
    for change in ({"pdr": 0.01}, {"ceiling": 5_000_100.0}, {"final_duration": 2.0},
                   {"wanted": {("pdr", "routerlab"), ("ndr", "routerlab")}}):
        assert search._finished(tmp_path, "e", **{**same, **change}) == {}, change
    assert search._forget(tmp_path, "e", keep={0}) is True
    assert list(pd.read_csv(tmp_path / "search_results.csv")["repeat"]) == [0]


def test_bench_engines_ties_an_alternating_router_and_ranks_steady_ones(monkeypatch, tmp_path):
    """bench engines' table and ranking over its repeats, taken in turn, with the searches
    stood in for by routers of known capacity: one alternating between runs, two steady."""
    from routerlab.benchmarks import engines

    capacities = {"linux": [400_000, 400_000, 400_000], "nft": [200_000, 600_000, 200_000],
                  "ebpf": [900_000, 910_000, 905_000]}
    calls = []

    def measure(request, announce=None, progress=None):
        calls.append((request.resolved[0].name, request.repeats))
        caps = capacities[request.resolved[0].name][:request.repeats]
        return [search.SearchResult("routerlab", "pdr", c, c * 1.01, 0.01, 10.0, [], False, i)
                for i, c in enumerate(caps)]

    monkeypatch.setattr(measurement, "generator_ceiling", lambda **kw: 5_000_000.0)
    monkeypatch.setattr(measurement, "measure", measure)
    ceil, df = engines.run(("linux", "nft", "ebpf"), {"nft": "single-flow-fw50"}, out=tmp_path, repeats=3)
    # in turn: every engine's first repeat, then every engine's second...
    assert calls == [(e, i) for i in (1, 2, 3) for e in ("linux", "nft", "ebpf")]
    t = df.set_index("engine")
    assert t.loc["nft", "pdr_pps"] == 200_000 and t.loc["nft", "spread"] == pytest.approx(3.0)
    assert (t.loc["ebpf", "rank"], t.loc["linux", "rank"], t.loc["nft", "rank"]) == (1, 2, 2)
    text = engines.report(ceil, df)
    assert "ranking (> where every repeat of one is above every repeat of the other, ≈ a tie): " \
           "ebpf > linux ≈ nft (ebpf > nft)" in text
    assert "ties (their repeats overlap, so no order between them holds): linux with nft; nft with linux" in text


def _tossed(answers, disagree=True, wide=(), distance=None):
    """Repeats of a search: three full-length trials at each answer and two at each failing
    load, which disagree there (``disagree``) or not; the first repeat also ran two trials
    that disagreed at each load of ``wide``."""
    res = _repeats_of(answers, 1.02)
    rows = []
    distance = distance or [100.0] * len(answers)
    for i, (a, d) in enumerate(zip(answers, distance)):
        outcomes = [(a * 2, 0.5, False)] + [(a, 1.0, ok) for ok in (True, True, not disagree)] \
            + [(a * 1.02, 1.0, ok) for ok in (False, disagree)]
        if i == 0:
            outcomes += [(load, 1.0, ok) for load in wide for ok in (True, False)]
        for load, dur, ok in outcomes:
            rows.append({"experiment": "e", "repeat": i, "load": load, "duration": dur, "tx": 1000,
                         "rx": 1000 if ok else 900, "passed": ok, "generator_limited": False, "disturbed": False,
                         "cpu_distance_ns": d, "napi_ns_per_packet": 300.0})
    return res, pd.DataFrame(rows)


ANSWERS = [1.00e6, 1.10e6, 1.05e6, 1.20e6, 1.15e6]


def test_trials_that_disagree_within_one_repeat_are_named_only_where_they_span_the_answers():
    # every repeat's trials disagree next to its own answer only: the repeats differ, and
    # all of them together would cover the answers' range whatever they did
    res, trials = _tossed(ANSWERS)
    within = repeats.disagreement(res, trials)
    assert (within.loads, within.mixed, within.repeats) == (10, 10, 5) and within.width == pytest.approx(1.02)
    assert not within.accounts and "a narrower range than the answers' (1.200)" in within.words()
    assert repeats.WITHIN_REPEAT not in repeats.cause_words(repeats.explain(res, trials), within)
    # the first repeat's own trials disagreed from 0.98 to 1.25 Mpps: wider than the answers
    res, trials = _tossed(ANSWERS, wide=[0.98e6, 1.12e6, 1.25e6])
    within = repeats.disagreement(res, trials)
    assert within.widest == 0 and (within.low, within.high) == (0.98e6, 1.25e6) and within.accounts
    words = repeats.cause_words(repeats.explain(res, trials), within)
    assert repeats.WITHIN_REPEAT in words and "repeat 1's trials at one load both passed and failed from 980,000 " \
        "to 1,250,000 pps (highest / lowest 1.276; 13 of the 13 loads" in words, words
    assert "the repeats' answers differ by no more than one repeat's own trials do" in words
    # trials that agree at every load: nothing to lay on them
    res, trials = _tossed(ANSWERS, disagree=False)
    within = repeats.disagreement(res, trials)
    assert (within.mixed, within.widest) == (0, -1) and not within.accounts
    # trials the generator could not keep up in, or that stayed disturbed, say nothing of the router
    res, trials = _tossed(ANSWERS, wide=[0.98e6, 1.12e6, 1.25e6])
    assert repeats.disagreement(res, trials.assign(generator_limited=True)).mixed == 0
    assert repeats.disagreement(res, trials.assign(disturbed=True)).mixed == 0
    # where a recorded cause moved with the answer, it is named, not the trials'
    # disagreement: it may be what made them disagree
    res, trials = _tossed(ANSWERS, wide=[0.98e6, 1.12e6, 1.25e6], distance=[300.0, 150.0, 200.0, 90.0, 120.0])
    words = repeats.cause_words(repeats.explain(res, trials), repeats.disagreement(res, trials))
    assert words.startswith("moved with the answer: the round trip") and repeats.WITHIN_REPEAT not in words, words


def test_bench_repeat_counts_the_spreads_that_trials_disagreeing_within_a_repeat_account_for(tmp_path):
    from routerlab.benchmarks import repeat

    res, trials = _tossed(ANSWERS, wide=[0.98e6, 1.12e6, 1.25e6])
    res.to_csv(tmp_path / "search_results.csv", index=False)
    trials.assign(engine="ebpf", scenario="single-flow", kind="pdr", method="routerlab") \
        .to_csv(tmp_path / "search_trials.csv", index=False)
    lines = repeat.search_report(repeat.searches(tmp_path)).splitlines()
    assert "ABOVE THE GOAL" in lines[0] and repeats.WITHIN_REPEAT in lines[1]
    assert lines[-1].startswith("spread within the goal: 0 of 1; of the 1 above it, 0 with a recorded quantity")
    assert "), 1 where the trials' variation within a repeat accounts for it" in lines[-1], lines[-1]
