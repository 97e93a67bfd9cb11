"""The calibration router (routerlab.engines.calibration) and ``bench calibrate``
(routerlab.benchmarks.calibrate): the truth of an nftables limit against worked examples,
the searches against that truth, refusals of bad capacities, and, as root on a real
testbed, the limiter limiting."""

import math

import pytest
from conftest import engine_marks
from click.testing import CliRunner

from routerlab import engines
from routerlab.measuring import measurement, search
from routerlab.analysis import scenarios
from routerlab.testbed import traffic
from routerlab.testbed import namespaces
from routerlab.benchmarks import calibrate
from routerlab.cli.app import app
from routerlab.engines.calibration import Calibration
from routerlab.errors import ParameterError

needs_nft, on_testbed = engine_marks("nftables (the calibration router)", lambda: Calibration().check())


# -- the truth ---------------------------------------------------------------------------------

def test_the_router_queue_a_cpu_stop_fills_is_the_smaller_of_backlog_and_bucket():
    from types import SimpleNamespace

    rlgen, xdp = SimpleNamespace(generator="rlgen"), SimpleNamespace(generator="xdp")
    backlog = engines.get("linux").queue_packets(rlgen)
    assert backlog == int(open("/proc/sys/net/core/netdev_max_backlog").read())
    assert Calibration(capacity_pps=58_000).queue_packets(rlgen) == min(backlog, 580)  # 10 ms of bucket
    assert Calibration(capacity_pps=38_000, burst=10**6).queue_packets(rlgen) == backlog
    assert engines.get("ebpf").queue_packets(rlgen) == 256  # XDP waits in the veth's ring, not the backlog
    # the XDP generator's redirects wait in the router's input ring, for every engine
    assert engines.get("linux").queue_packets(xdp) == 256
    assert Calibration(capacity_pps=38_000, burst=100).queue_packets(xdp) == 100


def test_worked_example_38000_pps_burst_380_two_seconds():
    eng = Calibration(capacity_pps=38_000, burst=380)
    assert eng.cost_ns == 26_315  # 1e9 // 38000: the kernel charges whole nanoseconds
    assert eng.rate_pps == pytest.approx(38_001.140, abs=1e-3)  # 1e9 / 26,315: 1.14 pps above N
    assert eng.true_ndr(2.0) == pytest.approx(38_191.14, abs=0.01)  # N_eff + B/T = 38,001.14 + 190
    assert eng.true_pdr(2.0, 0.005) == pytest.approx(38_191.14 / 0.995, abs=0.01)
    assert eng.true_pdr(2.0, 0.005) == pytest.approx(38_383.06, abs=0.01)
    # a short search trial: the burst is worth four times as much
    assert eng.true_ndr(0.5) == pytest.approx(38_761.14, abs=0.01)
    # twice the capacity: 152,000 sent, 2 x 38,001.14 + 380 = 76,382.28 let through
    assert eng.passed(76_000, 2.0) == pytest.approx(76_382.28, abs=0.01)
    assert eng.expected_loss(76_000, 2.0) == pytest.approx(0.497485, abs=1e-6)


def test_integer_nanoseconds_enforce_a_rate_a_hair_above_the_capacity():
    eng = Calibration(capacity_pps=300_007, burst=64)
    assert eng.cost_ns == 3_333 and eng.rate_pps == pytest.approx(300_030.003, abs=1e-3)
    assert Calibration(capacity_pps=1_000_000).rate_pps == 1_000_000  # divides evenly: exact


def test_no_loss_up_to_the_ndr_and_exactly_x_at_the_pdr():
    eng = Calibration(capacity_pps=50_000, burst=500)
    for t in (0.5, 1.0, 2.0):
        ndr, pdr = eng.true_ndr(t), eng.true_pdr(t, 0.005)
        assert eng.expected_loss(ndr, t) == 0 and eng.expected_loss(0.5 * ndr, t) == 0
        assert eng.expected_loss(ndr * 1.001, t) > 0
        assert eng.expected_loss(pdr, t) == pytest.approx(0.005, abs=1e-12)
        assert eng.expected_loss(pdr * 1.01, t) > 0.005


def test_default_burst_is_ten_milliseconds_at_the_capacity_and_at_least_64():
    assert Calibration(capacity_pps=38_000).burst == 380
    assert Calibration(capacity_pps=38_001).burst == 381  # rounded up: never less than 10 ms
    assert Calibration(capacity_pps=1_000).burst == 64
    assert Calibration(capacity_pps=38_000, burst=1).burst == 1


def test_the_ruleset_limits_with_the_capacity_and_burst_given():
    rules = Calibration(capacity_pps=38_000, burst=380).ruleset()
    assert "limit rate over 38000/second burst 380 packets counter name \"limited\" drop" in rules
    assert "hook forward" in rules and "policy accept" in rules


@pytest.mark.parametrize("fn", [search.bisect, search.mlrsearch], ids=["routerlab", "mlrsearch"])
@pytest.mark.parametrize("kind", ["pdr", "ndr"])
def test_searches_on_the_limiter_model_find_the_truth_within_their_precision(fn, kind):
    # the limiter's own arithmetic as the measure: what a perfect testbed would count
    eng = Calibration(capacity_pps=38_000)

    def measure(load, duration):
        return round(load * duration), math.floor(eng.passed(load, duration)), False

    r = fn(measure, kind=kind, lo=3_800, hi=380_000, precision=0.02, final_duration=2.0)
    truth = eng.true_pdr(2.0) if kind == "pdr" else eng.true_ndr(2.0)
    assert calibrate.judge(r.lower, truth, 0.02, generator_bound=r.generator_bound)["within"]
    assert r.lower <= truth * 1.0001  # a pass above the truth would be a wrong count


# -- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -5, 1.5, "38000", True, float("nan"), float("inf"), 200_000_000])
def test_a_bad_capacity_is_refused_by_name(bad):
    with pytest.raises(ParameterError) as e:
        Calibration(capacity_pps=bad)
    assert e.value.name == "capacity_pps"
    assert str(e.value) == f"capacity_pps: must be a whole number of packets per second in 1..100,000,000, got {bad!r}"


@pytest.mark.parametrize("bad", [0, -1, 2.5, 2**32])
def test_a_bad_burst_is_refused_by_name(bad):
    # burst 0 would be nftables' default of 5, not "no burst"
    with pytest.raises(ParameterError) as e:
        Calibration(capacity_pps=38_000, burst=bad)
    assert e.value.name == "burst" and "whole number of packets" in str(e.value)


def test_a_missing_capacity_is_refused_before_the_testbed_is_touched():
    sc = scenarios.load("single-flow")
    eng = engines.get("calibration")
    assert isinstance(eng, Calibration) and eng.capacity_pps is None
    for attempt in (lambda: measurement.resolve("calibration", "single-flow"),
                    lambda: eng.start(None, sc),  # no testbed: the refusal comes first
                    lambda: eng.true_pdr(2.0)):
        with pytest.raises(ParameterError) as e:
            attempt()
        assert e.value.name == "capacity_pps" and "bench calibrate --capacity" in str(e.value)


def test_whole_numbers_of_any_numeric_type_are_taken():
    assert Calibration(capacity_pps=38_000.0).capacity_pps == 38_000
    assert Calibration(capacity_pps=38_000, burst=400.0).burst == 400


def test_the_limiter_refuses_a_firewall_scenario():
    with pytest.raises(ParameterError) as e:
        Calibration(capacity_pps=38_000).check(scenarios.load("single-flow-fw5"))
    assert e.value.name == "scenario" and "firewall" in str(e.value)


@pytest.mark.parametrize("bad", [0.0, 0.001, 0.95, 1.0, 2.0])
def test_capacities_outside_the_range_are_refused_naming_the_option(bad):
    with pytest.raises(ParameterError) as e:
        calibrate.check_fractions([0.1, bad])
    assert e.value.name == "--capacity" and f"got {bad!r}" in str(e.value)


def test_capacities_keep_their_order_without_repeats():
    assert calibrate.check_fractions([0.25, 0.1, 0.25]) == [0.25, 0.1]


def test_the_command_refuses_a_bad_capacity_before_measuring():
    r = CliRunner().invoke(app, ["bench", "calibrate", "--capacity", "1.5", "--out", "/nonexistent/x"])
    assert r.exit_code == 1
    assert "--capacity: a capacity is a fraction of the generator's ceiling in [0.005, 0.9], got 1.5" in r.output


# -- judging answers ---------------------------------------------------------------------------

def test_the_sweep_answer_is_judged_by_the_bracket_around_the_truth():
    eng = Calibration(capacity_pps=40_000)
    loads = calibrate.sweep_loads(40_000, 400_000)
    assert loads == [20_000, 36_000, 38_800, 41_200, 44_000, 60_000, 80_000]
    plr = [eng.expected_loss(o, 2.0) for o in loads]
    truth = eng.true_pdr(2.0)
    a = calibrate.sweep_answer(loads, plr, [p == 0 for p in plr], truth, "pdr")
    assert a["found_pps"] == 38_800 and a["upper_pps"] == 41_200
    assert a["precision"] == pytest.approx((41_200 - 38_800) / 41_200) and a["within"]
    # the testbed losing 1% at 0.97 N: the sweep answers 0.9 N, outside its precision
    plr[2] = 0.01
    a = calibrate.sweep_answer(loads, plr, [p == 0 for p in plr], truth, "pdr")
    assert a["found_pps"] == 36_000 and not a["within"] and a["error"] == pytest.approx(36_000 / truth - 1)


def test_the_sweep_drops_loads_the_generator_cannot_send():
    assert calibrate.sweep_loads(200_000, 400_000) == [100_000, 180_000, 194_000, 206_000, 220_000, 300_000]


def test_an_answer_the_generator_bounded_is_never_within():
    assert calibrate.judge(100_000, 100_500, 0.02, generator_bound=False) == {
        "error": pytest.approx(-0.004975, abs=1e-6), "within": True}
    assert not calibrate.judge(100_000, 100_500, 0.02, generator_bound=True)["within"]
    assert not calibrate.judge(97_000, 100_000, 0.02, generator_bound=False)["within"]
    assert not calibrate.judge(None, 100_000, 0.02, generator_bound=False)["within"]


# -- on a real testbed -------------------------------------------------------------------------

@needs_nft
@on_testbed
def test_the_limiter_limits_on_the_testbed():
    """Loss near 50% at twice the capacity and near 0 at half of it, all taken by the
    limiter (short: 1 s trials, run it under the testbed lock). At twice the capacity
    the trial of the three whose loss beside the limiter's is the median is judged: one
    trial in which a machine busy elsewhere made the chain lose packets of its own moves
    no answer."""
    eng = Calibration(capacity_pps=20_000)
    with namespaces.NamespaceTestbed() as tb:
        eng.start(tb, scenarios.load("single-flow"))
        seen = {}
        for factor, runs in ((0.5, 1), (2.0, 3)):
            trials = []
            for _ in range(runs):
                c0 = eng.limiter_counts(tb)
                r = traffic.run_trial(tb, factor * 20_000, 1.0, traffic.TrafficSpec())
                c1 = eng.limiter_counts(tb)
                trials.append((1 - r.rx / r.tx, c1["limited"] - c0["limited"], r.tx - r.rx))
            seen[factor] = sorted(trials, key=lambda t: t[2] - t[1])[runs // 2]
    loss, limited, lost = seen[2.0]
    assert eng.burst == 200 and eng.expected_loss(40_000, 1.0) == pytest.approx(0.495)  # 1 - 20,200 / 40,000
    assert loss == pytest.approx(eng.expected_loss(40_000, 1.0), abs=0.01)
    assert limited == pytest.approx(lost, rel=0.01)  # the limiter, not the testbed, lost them
    loss, limited, _ = seen[0.5]
    assert loss <= 0.001 and limited == 0



def _trials_near_the_truth():
    """Sweep and search trials of a 40,000-pps limiter (B = 400: true NDR 40,200 pps for
    2 s trials, 40,800 for 0.5 s ones)."""
    import pandas as pd

    return pd.DataFrame([
        (38_800, 2.0, 0, float("nan"), False),
        (38_800, 2.0, 375, "dut:CPU_BACKLOG=375", True),   # its router CPU stopped in every attempt
        (41_200, 2.0, 2_000, "dut:NETFILTER_DROP=2000", True),  # above the truth: the limiter's
        (40_500, 0.5, 12, "dut:NETFILTER_DROP=10", False),  # under a short trial's truth
        (40_500, 2.0, 100, "dut:NETFILTER_DROP=100", False),  # above a long trial's
    ], columns=calibrate.CHAIN_COLUMNS)


def test_the_chains_own_loss_is_the_loss_where_the_limiter_drops_nothing():
    got = calibrate.chain_loss(Calibration(capacity_pps=40_000), _trials_near_the_truth())
    assert got == {"trials": 3, "lossy_trials": 2, "disturbed_lossy": 1, "lost": 387,
                   "by_counter": "dut:CPU_BACKLOG=375;dut:NETFILTER_DROP=10;unexplained=2"}
    clean = _trials_near_the_truth().assign(lost=0, drops=float("nan"))
    assert calibrate.chain_loss(Calibration(capacity_pps=40_000), clean) == {
        "trials": 3, "lossy_trials": 0, "disturbed_lossy": 0, "lost": 0, "by_counter": ""}
    # trials from before the validation knew CPU stops have no flag: none counts as disturbed
    old = _trials_near_the_truth().drop(columns="disturbed")
    assert calibrate.chain_loss(Calibration(capacity_pps=40_000), old)["disturbed_lossy"] == 0


def _answers(within, host=False):
    """A run with one answer: within its precision, or 10.9% low on the trials near the
    truth, where (with ``host``) every lossy trial was disturbed in every attempt."""
    import pandas as pd

    row = {"experiment": "calibration-40000pps-b400", "capacity_fraction": 0.1, "capacity_pps": 40_000,
           "burst_packets": 400, "duration_s": 2.0, "kind": "pdr", "method": "routerlab", "true_pps": 40_402.0,
           "found_pps": 40_000.0 if within else 36_000.0, "upper_pps": 40_800.0, "precision": 0.02,
           "error": -0.00995 if within else -0.109, "within": within, "generator_bound": False,
           "trial_seconds": 28.0}
    curve = pd.DataFrame([{"experiment": row["experiment"], "capacity_pps": 40_000, "factor": 2.0,
                           "offered_pps": 80_000, "runs": 3, "expected_loss": 0.4975, "plr": 0.4976,
                           "plr_min": 0.4975, "plr_max": 0.4977}])
    trials = _trials_near_the_truth()
    if within:
        trials = trials.assign(lost=0, drops=float("nan"))
    if host:
        trials = trials.assign(disturbed=True)
    counts = calibrate.chain_loss(Calibration(capacity_pps=40_000), trials)
    row.update(lossy_trials=counts["lossy_trials"], disturbed_lossy=counts["disturbed_lossy"])
    chain = pd.DataFrame([{"experiment": row["experiment"], "capacity_pps": 40_000, **counts}])
    return calibrate.CalibrationRun(400_000, pd.DataFrame([row]), curve, chain)


@pytest.mark.parametrize("within, code", [(True, 0), (False, 1)])
def test_the_command_exits_non_zero_when_an_answer_is_outside_its_precision(monkeypatch, within, code):
    seen = {}

    def fake_run(fractions, **kw):
        seen.update(kw, fractions=fractions)
        return _answers(within)

    monkeypatch.setattr(calibrate, "run", fake_run)
    r = CliRunner().invoke(app, ["bench", "calibrate", "--capacity", "0.1", "--duration", "1", "--method", "routerlab"])
    assert r.exit_code == code, r.output
    assert seen["fractions"] == [0.1] and seen["duration"] == 1.0 and seen["methods"] == ("routerlab",)
    assert "PDR  routerlab    40,402" in r.output
    where = "lost where the limiter drops nothing (loads up to the true NDR): "
    assert where + ("none in 3 trials" if within else
                    "2 of 3 trials, 387 packets: dut CPU_BACKLOG 375, dut NETFILTER_DROP 10, unexplained 2; "
                    "1 of those trials disturbed in every attempt") in r.output
    assert ("router's input queue overflowing while its CPU was held up" in r.output) == (not within)
    last = r.output.strip().splitlines()[-1]
    assert last == ("all 1 answers lie within their precision of the truth" if within else
                    "1 of 1 answers lie outside their precision of the truth: 0.1 PDR routerlab")
    # one of the two lossy trials under the truth was not disturbed: the miss is the chain's
    assert "no (host)" not in r.output


def test_a_miss_on_trials_disturbed_in_every_attempt_is_the_hosts(monkeypatch):
    monkeypatch.setattr(calibrate, "run", lambda fractions, **kw: _answers(False, host=True))
    r = CliRunner().invoke(app, ["bench", "calibrate", "--capacity", "0.1"])
    assert r.exit_code == 1, r.output  # still outside its precision
    assert "-10.90%      2.0%  no (host)" in r.output
    lines = r.output.strip().splitlines()
    assert lines[-2] == "1 of 1 answers lie outside their precision of the truth: 0.1 PDR routerlab"
    assert lines[-1].startswith('1 of them ("no (host)") missed on a disturbed host: below the truth, and every '
                                "trial of their method that lost packets where the limiter drops nothing was "
                                "disturbed in every attempt")


def _calibration_rows():
    """Answers of the calibrate run of 2026-11-26 06:11 UTC (613f4b1, alone on the
    machine; 9 of 18 within): found and true pps, within and generator_bound from its
    calibration.csv, and the counts :func:`calibrate.answer_counts` gives on its
    trials.csv and search_trials.csv. Then three made-up answers, at a capacity that run
    did not have, for the cases it did not have."""
    import pandas as pd

    cols = ["capacity_fraction", "kind", "method", "true_pps", "found_pps", "within", "generator_bound",
            "lossy_trials", "disturbed_lossy"]
    measured = pd.DataFrame([
        (0.1, "ndr", "mlrsearch", 41_348.1, 39_512.8, False, False, 4, 4),
        (0.25, "pdr", "sweep", 103_893.5, 99_768.0, True, False, 2, 2),  # within: never the host's
        (0.25, "ndr", "sweep", 103_374.0, 92_569.0, False, False, 2, 2),
        (0.5, "pdr", "routerlab", 207_786.9, 203_982.9, False, True, 1, 1),  # the generator's
        (0.5, "pdr", "mlrsearch", 207_786.9, 172_618.8, False, False, 8, 7),  # a loss no disturbance came with
        (0.5, "ndr", "routerlab", 206_748.0, 143_208.8, False, False, 19, 19),
    ], columns=cols)
    made_up = pd.DataFrame([
        (0.75, "ndr", "sweep", 300_000.0, float("nan"), False, False, 4, 4),  # none found
        (0.75, "ndr", "mlrsearch", 300_000.0, 312_000.0, False, False, 10, 10),  # above the truth
        (0.75, "pdr", "sweep", 301_500.0, 250_000.0, False, False, 0, 0),  # nothing lost under the truth
    ], columns=cols)
    return pd.concat([measured, made_up], ignore_index=True)


def test_the_host_is_blamed_only_for_low_answers_all_of_whose_losses_were_disturbed():
    got = calibrate.host_disturbed(_calibration_rows())
    assert got.tolist() == [True, False, True, False, False, True, True, False, False]
    # a table from before the counts were written blames nothing on the host
    old = _calibration_rows().drop(columns=["lossy_trials", "disturbed_lossy"])
    assert not calibrate.host_disturbed(old).any()


def test_each_answer_counts_its_own_methods_trials():
    import pandas as pd

    eng = Calibration(capacity_pps=40_000)  # true NDR 40,200 pps for 2 s trials
    sweep_trials = _trials_near_the_truth()
    probes = pd.DataFrame([
        # method, kind, load, duration, lost, drops, disturbed
        ("routerlab", "ndr", 39_000, 2.0, 50, "dut:CPU_BACKLOG=50", True),
        ("routerlab", "ndr", 39_500, 2.0, 0, float("nan"), False),
        ("routerlab", "pdr", 39_000, 2.0, 70, "dut:CPU_BACKLOG=70", False),
        ("mlrsearch", "ndr", 39_800, 2.0, 30, "dut:CPU_BACKLOG=30", False),
        ("mlrsearch", "ndr", 45_000, 2.0, 900, "dut:NETFILTER_DROP=900", False),  # above the truth
    ], columns=["method", "kind", "load", "duration", "lost", "drops", "disturbed"])
    counts = {(m, k): calibrate.answer_counts(eng, sweep_trials, probes, m, k)
              for m, k in (("sweep", None), ("routerlab", "ndr"), ("routerlab", "pdr"), ("mlrsearch", "ndr"),
                           ("mlrsearch", "pdr"))}
    assert counts == {
        ("sweep", None): {"lossy_trials": 2, "disturbed_lossy": 1},
        ("routerlab", "ndr"): {"lossy_trials": 1, "disturbed_lossy": 1},
        ("routerlab", "pdr"): {"lossy_trials": 1, "disturbed_lossy": 0},
        ("mlrsearch", "ndr"): {"lossy_trials": 1, "disturbed_lossy": 0},
        ("mlrsearch", "pdr"): {"lossy_trials": 0, "disturbed_lossy": 0},
    }


def test_the_router_cpus_busy_share_just_below_the_capacity_is_reported():
    """The calibrate run of 2026-11-28 at 0.1 of the XDP ceiling (607,350 pps): at its
    sweep's highest load below N (589,130 pps) the router CPU was busy 69.2%, 71.1% and
    65.7%, and those trials lost 165-189 packets at the router's input ring where the
    limiter drops nothing. Such a capacity is beyond the calibration router's model."""
    import pandas as pd

    trials = pd.DataFrame({"offered_pps": [303_675.0] * 3 + [589_130.0] * 3 + [625_570.0] * 3,
                           "cpu_load": [0.3805, 0.3981, 0.4537, 0.6915, 0.7113, 0.6568, 0.755, 0.75, 0.7892]})
    assert calibrate.router_busy(trials, 607_350) == pytest.approx(0.6865, abs=1e-4)
    assert math.isnan(calibrate.router_busy(trials, 300_000))  # no load below N
    run = _answers(True)
    busy = calibrate.report(calibrate.CalibrationRun(
        run.ceiling_pps, run.answers.assign(router_busy=0.6865), run.losses, run.chain))
    assert "  router CPU busy 69% just below N: above 60%, beyond the calibration router's model" in busy
    idle = calibrate.report(calibrate.CalibrationRun(
        run.ceiling_pps, run.answers.assign(router_busy=0.38), run.losses, run.chain))
    assert "  router CPU busy 38% just below N\n" in idle
