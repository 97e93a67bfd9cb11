"""routerlab.analysis.stats against hand-worked examples."""

import numpy as np
import pandas as pd
import pytest

from routerlab.analysis import stats
from routerlab.errors import ParameterError


def trials(loads_losses, tx=100_000):
    """Trial table from {load: [loss ratios]}; rx = tx * (1 - loss)."""
    rows = []
    for load, losses in loads_losses.items():
        for i, loss in enumerate(losses):
            rows.append({"offered_pps": load, "trial": i, "tx": tx, "rx": round(tx * (1 - loss))})
    return pd.DataFrame(rows)


def test_trial_loss_keeps_negative_when_rx_exceeds_tx():
    assert stats.trial_loss([1000, 1000], [990, 1003]) == pytest.approx([0.01, -0.003])


def test_trial_loss_zero_tx_names_the_row():
    with pytest.raises(ParameterError, match="row 1"):
        stats.trial_loss([10, 0], [10, 0])


def test_summary_three_trials_by_hand():
    # losses 1%, 2%, 3%: mean 0.02, sd 0.01, t(0.975, df=2) = 4.3027 (tables)
    s = stats.summarize(trials({1000: [0.01, 0.02, 0.03]})).iloc[0]
    assert s.runs == 3
    assert s.plr == pytest.approx(0.02)
    assert s.plr_sd == pytest.approx(0.01)
    assert s.t_quantile == pytest.approx(4.3027, abs=1e-4)
    half = 4.302653 * 0.01 / np.sqrt(3)
    assert s.ucl95 == pytest.approx(0.02 + half, rel=1e-5)
    assert s.lcl95 == pytest.approx(0.02 - half, rel=1e-5)  # negative: kept, clipped only on display
    assert s.delta_ucl95 == pytest.approx(half / 0.02, rel=1e-5)
    assert s.dr == pytest.approx(0.98)
    assert s.throughput_pps == pytest.approx(980.0)
    assert not s.lossless


def test_mean_interval_by_hand_and_at_the_edges():
    # 1, 2, 3 (NaN left out): mean 2, sd 1, t(0.975, df=2) = 4.302653
    m, h = stats.mean_interval([1.0, np.nan, 2.0, 3.0])
    assert m == pytest.approx(2.0) and h == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)
    assert stats.mean_interval([-0.003, 0.0, 0.0])[0] == pytest.approx(-0.001)  # not clipped
    m, h = stats.mean_interval([5.0])
    assert m == 5.0 and np.isnan(h)
    assert all(np.isnan(stats.mean_interval([np.nan])))


def test_df_convention_k_matches_the_paper_table():
    # The authors' table gives 2.009 for K = 50: that is df = 50, not 49.
    assert stats.t_quantile(50, df_convention="k") == pytest.approx(2.009, abs=5e-4)
    assert stats.t_quantile(50) == pytest.approx(2.0096, abs=1e-4)
    assert stats.t_quantile(50, df_convention="k") != pytest.approx(stats.t_quantile(50), abs=1e-4)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_t_quantile_is_scipy_stats_t_ppf_to_the_bit(confidence):
    # t_quantile uses scipy.special.stdtrit to keep scipy.stats out of start-up; it must
    # still be the number scipy.stats.t.ppf gives, for every K and both conventions.
    from scipy.stats import t

    k = np.arange(0, 301)
    for dfc, df in (("k-1", k - 1), ("k", k)):
        ours = stats.t_quantile(k, confidence, dfc)
        ref = t.ppf((1 + confidence) / 2, np.where(df >= 1, df, np.nan))
        np.testing.assert_array_equal(ours, ref)


def test_single_trial_has_no_interval_and_says_so():
    t = trials({1000: [0.0], 2000: [0.01, 0.02]})
    s = stats.summarize(t)
    assert np.isnan(s.ucl95.iloc[0]) and np.isnan(s.plr_sd.iloc[0])
    assert not np.isnan(s.ucl95.iloc[1])
    (a,) = stats.assess(t)
    assert any("1000 pps: no confidence interval" in n for n in a.notes)


def test_loads_out_of_order_and_repeated_are_pooled_and_sorted():
    t = pd.concat([trials({3000: [0.5]}), trials({1000: [0.0, 0.0]}), trials({3000: [0.3]})])
    s = stats.summarize(t)
    assert s.offered_pps.tolist() == [1000, 3000]
    assert s.runs.tolist() == [2, 2]
    assert s.plr.iloc[1] == pytest.approx(0.4)


def test_tir_by_hand():
    # T = 100, 200, 150 pps -> TIR = (200-100)/100, (150-200)/100
    tir = stats.throughput_increase_ratio([100, 200, 300], [0.0, 0.0, 0.5])
    assert np.isnan(tir[0]) and tir[1:] == pytest.approx([1.0, -0.5])


def test_tir_in_summary_restarts_per_sweep():
    t = pd.concat([trials({100: [0], 200: [0]}).assign(experiment="a"),
                   trials({100: [0], 300: [0]}).assign(experiment="b")])
    s = stats.summarize(t, by="experiment")
    assert np.isnan(s.tir.iloc[0]) and np.isnan(s.tir.iloc[2])
    assert s.tir.iloc[1] == pytest.approx(1.0) and s.tir.iloc[3] == pytest.approx(1.0)


def test_pdr_is_the_load_before_the_first_exceedance():
    # 0.002 at the last load does not bring PDR back up: every lower load must pass too.
    r = stats.pdr_load([1, 2, 3, 4, 5], [0, 0.001, 0.004, 0.006, 0.002], 0.005)
    assert r == stats.RateBound(3.0, "found")


def test_pdr_below_and_above_the_range():
    assert stats.pdr_load([1, 2], [0.01, 0.02]).status == "below_range"
    r = stats.pdr_load([1, 2], [0.0, 0.001])
    assert r.status == "at_least_max" and r.load == 2.0
    assert "at least" in str(r)


def test_pdr_ignores_the_floor_and_counts_exact_threshold_as_passing():
    assert stats.pdr_load([1, 2, 3], [1e-9, 0.005, 0.0051], 0.005).load == 2.0


def test_ndr_uses_every_trial():
    t = trials({1000: [0.0, 0.0], 2000: [0.0, 1e-5], 3000: [0.0, 0.0]})
    (a,) = stats.assess(t)
    assert a.ndr == stats.RateBound(1000.0, "found")


def sweep(plr):
    o = np.arange(1, len(plr) + 1) * 100_000.0
    return o, np.array(plr)


def test_verdict_good_when_throughput_flattens_right_after_pdr():
    # T: 100k, 200k, 300k, 393k(PLR 1.75%), 400k, 401k -> TIR at candidate 0.07, then 0.01
    o, p = sweep([0, 0, 0, 0.0175, 0.2, 1 - 401_000 / 600_000])
    v = stats.saturation_verdict(o, p)
    assert v.good and v.pdr_index == 3 and v.candidate_index == 4 and v.saturation_index == 4
    assert v.tir[4] == pytest.approx((400_000 - 393_000) / 100_000)


def test_strict_and_notebook_differ_on_a_steep_candidate():
    # candidate TIR = 0.5 (>= eta*m = 0.3), later TIR 0.05: strict BAD, notebook GOOD.
    t = np.array([100, 200, 300, 350, 355]) * 1000.0
    o = np.arange(1, 6) * 100_000.0
    p = 1 - t / o
    p[2] = 0.006  # first exceedance at 300 kpps
    t[2] = o[2] * (1 - p[2])
    p[3] = 1 - (t[2] + 50_000) / o[3]
    p[4] = 1 - (t[2] + 55_000) / o[4]
    strict = stats.saturation_verdict(o, p)
    nb = stats.saturation_verdict(o, p, mode="notebook")
    assert not strict.good and "not below eta*m" in strict.reason
    assert nb.good and "unconditionally" in nb.reason


def test_verdict_bad_when_throughput_rises_again():
    o, p = sweep([0, 0, 0.01, 1 - 200_500 / 400_000, 1 - 290_000 / 500_000])
    for mode in ("strict", "notebook"):
        v = stats.saturation_verdict(o, p, mode=mode)
        assert not v.good and "rises again" in v.reason


def test_verdict_without_exceedance_or_candidate_is_bad_with_reason():
    v = stats.saturation_verdict([1, 2, 3], [0, 0, 0.001])
    assert not v.good and "saturation not reached" in v.reason and v.pdr_index is None
    v = stats.saturation_verdict([1, 2, 3], [0, 0, 0.3])
    assert not v.good and "no candidate" in v.reason and v.pdr_index == 2


def test_verdict_params_are_validated_by_name():
    with pytest.raises(ParameterError, match="pdr"):
        stats.VerdictParams(pdr=5)
    with pytest.raises(ParameterError, match="mode"):
        stats.saturation_verdict([1, 2], [0, 0], mode="loose")


def test_repeated_loads_are_refused_by_the_raw_functions():
    with pytest.raises(ParameterError, match="repeated"):
        stats.pdr_load([1, 1], [0, 0])


def test_assessment_record_is_flat_and_complete():
    t = trials({100_000: [0, 0], 200_000: [0.01, 0.01], 300_000: [0.34, 0.34]})
    (a,) = stats.assess(t)
    rec = a.record()
    assert rec["verdict"] in ("GOOD", "BAD") and rec["loads"] == 3 and rec["runs_max"] == 2
    assert rec["pdr_pps"] == 100_000


def test_generator_limited_trials_are_left_out_and_named():
    t = trials({100: [0.0, 0.0], 200: [0.0, 0.5]}).assign(generator_limited=[False, False, False, True])
    t["experiment"] = "x"
    (a,) = stats.assess(t)
    assert a.summary["runs"].tolist() == [2, 1]
    assert a.summary["plr"].iloc[1] == 0.0  # the limited trial's "loss" is the generator's, not the router's
    assert any("generator-limited" in n and "1 at 200 pps" in n for n in a.notes)
    # also when read back from CSV as text
    t["generator_limited"] = t["generator_limited"].astype(str)
    assert stats.assess(t)[0].summary["runs"].tolist() == [2, 1]


def test_a_verdict_says_why_and_what_to_do():
    flat = stats.saturation_verdict([1, 2, 3], [0, 0, 0])  # nothing lost: not judged
    assert flat.label == "BAD" and "saturation not reached in the tested range" in flat.reason
    assert flat.advice.startswith("saturation was not reached: offer loads up to the generator's ceiling")
    assert "--search pdr" in flat.advice
    assert flat.why == ("saturation not reached in the tested range "
                        "(to do: loads up to the generator's ceiling, or a search)")
    assert flat.explained == f"BAD: {flat.reason}. To do: {flat.advice}"
    late = stats.saturation_verdict([1, 2, 3], [0, 0, 0.1])  # crosses at the highest load
    assert late.advice.startswith("loss first passes the PDR fraction at the highest load: add loads above it")
    good = stats.saturation_verdict([100, 200, 300, 400], [0, 0.01, 0.34, 0.5])
    assert good.good and good.advice == "" and good.why == "saturation right after the PDR load"
    assert good.explained == f"GOOD: {good.reason}"
    rising = stats.saturation_verdict([100, 200, 300], [0, 0.01, 0.01])
    assert rising.why == "throughput still rising after the PDR load"
    again = stats.saturation_verdict([100, 200, 300, 400], [0, 0.01, 0.34, 0.01])
    assert again.why == "throughput rises again after saturation"


def test_the_record_adds_why_and_advice_to_the_keys_it_had():
    (a,) = stats.assess(trials({100: [0, 0], 200: [0, 0]}))
    rec = a.record()
    assert {"experiment", "verdict", "mode", "pdr_pps", "pdr_status", "ndr_pps", "ndr_status", "saturation_pps",
            "loads", "runs_min", "runs_max", "reason", "notes", "params"} < set(rec)
    assert rec["why"] == a.verdict.why and rec["advice"] == a.verdict.advice != ""


def test_the_generator_bounds_a_search_only_through_its_failing_load():
    loads = [400_000, 100_000, 200_000, 150_000]
    # the first probe, at the ceiling, was limited; the answer's failing load (200k) was not
    assert not stats.generator_bound(loads, [True, False, False, False], 200_000)
    assert stats.generator_bound(loads, [False, False, True, False], 200_000)
    assert stats.generator_bound(loads, [True, False, False, False], None)  # nothing failed but the generator
    assert not stats.generator_bound(loads, [False] * 4, float("nan"))


def test_a_search_answer_in_words():
    assert stats.search_answer(330_629.6, 336_631.1, True) == "at least 330,630 pps (limited by the generator)"
    assert stats.search_answer(109_686.5, 110_880.9, False) == "109,686 pps"
    assert stats.search_answer(600_000.0, None, False) == "at least 600,000 pps (passed at the ceiling)"
    assert stats.search_answer(float("nan"), 6_000.0, False) == "below the search range"


def test_searches_bound_per_search_and_the_flag_without_trials():
    results = pd.DataFrame({"experiment": ["a", "b"], "kind": "pdr", "method": "routerlab",
                            "upper_pps": [200.0, 300.0], "limited_by_generator": [True, True]})
    probes = pd.DataFrame({"experiment": ["a", "a", "b"], "kind": "pdr", "method": "routerlab",
                           "load": [400.0, 200.0, 300.0], "generator_limited": ["True", "False", "True"]})
    assert stats.searches_bound(results, probes).tolist() == [False, True]
    assert stats.searches_bound(results, None).tolist() == [True, True]


def test_a_trial_that_received_more_than_it_sent_is_kept_and_reported():
    t = trials({100: [0.0, -0.003], 200: [0.0, 0.0]})
    (a,) = stats.assess(t)
    assert a.summary["plr"].iloc[0] == pytest.approx(-0.0015)  # kept as it is, never clipped
    assert a.notes == ["rx > tx (negative loss, kept as it is) in trials: 1 at 100 pps"]
