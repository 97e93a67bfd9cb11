"""Campaign files: the committed ones load and equal the commands that made their datasets,
bad input is one line naming file, step, key and what is allowed, the estimate follows
from the steps, and a rerun skips what is finished (the bookkeeping, with fake steps)."""

import copy
import inspect
import shlex
from pathlib import Path

import pandas as pd
import pytest
from unittest.mock import ANY
import yaml
from click.testing import CliRunner

from routerlab.publish import campaign
from routerlab.analysis import comparison as tables
from routerlab.measuring import campaignfile, comparison, measurement
from routerlab.analysis import datasets
from routerlab.testbed import capabilities
from routerlab.testbed.settings import Settings
from routerlab.cli import app
from routerlab.errors import DataFormatError, ParameterError, RouterlabError
from routerlab.version import project_dir

DATASETS = Path(__file__).resolve().parents[1] / "datasets"

#: The testbed datasets measured by their campaign files (``routerlab campaign run``).
CAMPAIGNED = ("click-course", "comparison", "testbed-bmv2", "testbed-click", "testbed-ovs", "testbed-veth", "testbed-vpp")


@pytest.mark.parametrize("name", CAMPAIGNED)
def test_each_testbed_dataset_was_made_by_its_campaign_file(name):
    """Measured by ``routerlab campaign run`` of the file beside it: every record names the
    file's SHA-256, and each sweep's loads are the file's fractions of the ceiling the run
    measured (one for every sweep), or its fixed loads."""
    from routerlab.publish import facts

    folder = DATASETS / name
    c = campaign.load(folder / "campaign.yaml")
    f = facts.campaign(folder)
    records = datasets.read_experiments(folder).set_index("experiment")
    ours = records["campaign"] == f"campaign.yaml sha256:{f['sha256']}"
    assert f["ran"] and f["experiments_named"] == ours.sum()
    # a run resumed after its file gained steps: the records of the earlier steps name an
    # earlier file, and the steps it gained made the rest (each naming its experiment here)
    earlier = {f"campaign.yaml sha256:{e['sha256']}": e["experiments_named"] for e in f.get("earlier", [])}
    assert (ours | records["campaign"].isin(set(earlier))).all()
    assert sum(earlier.values()) == (~ours).sum()
    if earlier:
        assert set(records.index[ours]) <= {s.options.get("experiment") for s in c.steps}
    trials = datasets.read(folder).trials
    # the sweeps take the campaign's ceiling (bench engines measures its own)
    (ceiling,) = set(records.loc[trials["experiment"].unique(), "generator_ceiling_pps"])
    fractions = {tuple(s.options["loads_frac"]) for s in c.steps if s.options.get("loads_frac")}
    fractions |= {tuple(s.options["loads_frac"]) for s in c.steps if s.name == "compare"}
    for exp, t in trials.groupby("experiment"):
        loads = tuple(sorted(t["offered_pps"].unique()))
        fixed = {tuple(float(x) for x in s.options["loads"]) for s in c.steps if s.options.get("loads")}
        assert loads in {tuple(round(x * ceiling) for x in fr) for fr in fractions} | fixed, exp


def test_every_committed_campaign_file_loads_with_a_description():
    names = sorted(p.parent.name for p in DATASETS.glob("*/campaign.yaml"))
    assert names == sorted([*CAMPAIGNED, "microbench", "fast-reroute"])
    for name in names:
        c = campaign.load(DATASETS / name / "campaign.yaml")
        assert len(c.description) > 80 and "\n" not in c.description, name
        assert sum(e.seconds for e in campaign.estimate(c)) > 60, name


def test_microbench_and_fast_reroute_campaigns_are_their_readmes_commands():
    micro = campaign.load(DATASETS / "microbench" / "campaign.yaml")
    assert [s.command() for s in micro.steps] == [
        "routerlab bench forwarding --packets 5000000 --repeats 5 --testbed-pdr datasets/testbed-click/search_results.csv",
        "routerlab bench batch --packets 3000000 --repeats 5",
        "routerlab bench consolidation --repeats 3"]
    assert micro.steps[0].path("testbed_pdr") == project_dir("datasets") / "testbed-click" / "search_results.csv"
    assert not any(s.needs_root for s in micro.steps)  # from memory: no testbed
    (reroute,) = campaign.load(DATASETS / "fast-reroute" / "campaign.yaml").steps
    assert reroute.command() == "routerlab reroute --runs 10" and reroute.needs_root


GOOD = {"description": "A test campaign: what it is for.", "ceiling": "measure",
        "steps": [{"measure": {"engine": "linux", "scenario": "single-flow", "loads_frac": [0.1, 0.5], "runs": 2,
                               "duration": 1}},
                  {"bench": {"benchmark": "engines", "engines": ["linux", "nft"], "duration": 1}}]}


def write(folder: Path, data: dict, name: str = "c.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def with_step(i: int, step: dict) -> dict:
    data = copy.deepcopy(GOOD)
    data["steps"][i] = step
    return data


@pytest.mark.parametrize("data, parts", [
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "enigne": "x", "loads": [1]}}),
     ["step 1 (measure)", "unknown key 'enigne'", "allowed: engine, scenario, loads, loads_frac, runs"]),
    (with_step(1, {"measure": {"engine": "danos", "scenario": "single-flow", "loads": [1]}}),
     ["step 2 (measure)", "engine: 'danos'", "allowed: one of linux, nft, ebpf"]),
    (with_step(1, {"measure": {"engine": "linux", "scenario": "warp", "loads": [1]}}),
     ["step 2 (measure)", "scenario: 'warp'", "allowed: a preset (single-flow, single-flow-fw0,", "or a scenario YAML"]),
    (with_step(1, {"measur": {"engine": "linux"}}),
     ["step 2", "unknown step kind 'measur'", "allowed: measure, bench, compare, reroute"]),
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "loads_frac": [0.5, 2]}}),
     ["step 1 (measure)", "loads_frac: [0.5, 2]", "allowed: fractions must be in (0, 1.5]"]),
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "loads": [5000, -5]}}),
     ["step 1 (measure)", "loads: [5000, -5]", "allowed: a list of loads in pps, each > 0"]),
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow"}}),
     ["step 1 (measure)", "loads:", "allowed: loads, loads_frac, or search"]),
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "search": "both", "loads": [1]}}),
     ["step 1 (measure)", "loads: a search chooses", "allowed: either search or loads"]),
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "loads": [1], "rules": 100}}),
     ["step 1 (measure)", "rules:", "0..64"]),
    (with_step(1, {"bench": {"benchmark": "engnes"}}),
     ["step 2 (bench)", "benchmark 'engnes'", "allowed: engines, search, forwarding, batch, consolidation"]),
    (with_step(1, {"compare": {"engines": ["linux"], "scenarios": {"x": "nope"}, "loads_frac": [0.5], "runs": 1,
                               "duration": 1}}),
     ["step 2 (compare)", "scenarios: {'x': 'nope'}", "allowed: a mapping of published scenario names to presets"]),
    (with_step(1, {"compare": {"engines": ["linux"]}}),
     ["step 2 (compare)", "missing key(s) scenarios, loads_frac, runs, duration"]),
    # the ranges are measure's own (measuring.check): a PDR fraction below the PLR floor
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "loads": [1], "pdr": 1e-7}}),
     ["step 1 (measure)", "plr_floor:", "must be in (0, pdr)"]),
    (with_step(0, {"measure": {"engine": "linux", "scenario": "single-flow", "loads": [1], "steal_threshold": 1}}),
     ["step 1 (measure)", "steal_threshold:", "must be a fraction in [0, 1)"]),
    ({**GOOD, "ceiling": "360000"}, ["ceiling: '360000'", "allowed: measure"]),
    ({**GOOD, "stepz": []}, ["unknown key 'stepz'", "allowed: description, ceiling, steps"]),
])
def test_bad_input_is_one_line_naming_file_step_key_and_allowed_values(tmp_path, data, parts):
    path = write(tmp_path, data)
    with pytest.raises(DataFormatError) as e:
        campaign.load(path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    for part in parts:
        assert part in msg, (part, msg)


def test_an_error_names_the_line_of_its_step(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("description: x\nsteps:\n  - measure: {engine: linux, scenario: single-flow, loads: [1]}\n"
                    "  - measure: {engine: danos, scenario: single-flow, loads: [1]}\n")
    with pytest.raises(DataFormatError, match=rf"^{path}:4: step 2 \(measure\): engine"):
        campaign.load(path)


def test_the_measure_keys_are_the_parameters_of_measure():
    """...of its request, or the exec engine's commands, which a request takes as one
    parameter, ``router``."""
    from routerlab.engines.external import Commands

    params = inspect.signature(measurement.Request).parameters
    assert "router" in params
    assert set(campaignfile.STEPS["measure"]) <= set(params) | set(Commands.keys())
    assert set(Commands.keys()) <= set(campaignfile.STEPS["measure"])


def test_the_estimate_is_the_trials_plus_the_time_around_them(tmp_path):
    # one search (our bisection, 0.1% of the ceiling to it, short trials of 0.5 s down to 2%:
    # both ends, then log2(ln(1000) / -ln(0.98)) = 8.4 -> 9 halvings; then at most 3 trials
    # at each end, and one step of widening at each): 11 short trials, 4 final loads x 3 trials
    assert campaign.search_budget(1.0) == (11 + 12, 11 * 0.5 + 12 * 1.0)
    data = {"description": "x", "ceiling": "measure", "steps": [
        {"measure": {"engine": "linux", "scenario": "single-flow", "loads_frac": [0.1, 0.2, 0.4, 0.8], "runs": 5,
                     "duration": 2}},
        {"measure": {"engine": "nft", "scenario": "single-flow", "search": "both", "duration": 1}},
        # linux has no firewall: only nft's cell of single-flow-fw50 runs, gre is no one's here
        {"compare": {"engines": ["linux", "nft"], "scenarios": {"a": "single-flow-fw50", "b": "gre-multiflow-fw50"},
                     "loads_frac": [0.5, 1.0], "runs": 3, "duration": 2}},
        {"bench": {"benchmark": "consolidation", "nfs": ["IPFilter"], "repeats": 2}},
    ]}
    ceiling, sweep, search, compare, micro = campaign.estimate(campaign.load(write(tmp_path, data)))
    gap, up = campaign.TRIAL_GAP_S, campaign.BRING_UP_S
    assert (ceiling.step, ceiling.seconds) == (None, campaign.CEILING_S)  # once, at the start
    assert (sweep.trials, sweep.trial_seconds, sweep.overhead_seconds) == (20, 40, 20 * gap + up)
    # two searches, pdr and ndr, repeated three times by default, each repeat on a testbed of its own
    assert (search.trials, search.trial_seconds, search.overhead_seconds) == (3 * 46, 3 * 35, 3 * 46 * gap + 3 * up)
    assert (compare.trials, compare.trial_seconds, compare.overhead_seconds) == (6, 12, 6 * gap + up)
    assert (micro.trials, micro.unit) == (1 * 3 * 2 * 2, "timed runs")  # 3 chain lengths, plain and cached
    # without the campaign's ceiling each testbed step measures its own
    data.pop("ceiling")
    _, search_alone, _, _ = campaign.estimate(campaign.load(write(tmp_path, data)))
    assert search_alone.overhead_seconds == search.overhead_seconds + campaign.CEILING_S


@pytest.mark.parametrize("name", ["testbed-click", "testbed-bmv2", "testbed-ovs", "testbed-veth", "testbed-vpp",
                                  "click-course", "comparison"])
def test_the_estimates_of_the_testbed_campaigns_are_near_the_run_that_made_them(name):
    # the run's span, from its first trial's start to its last record (facts.json's
    # "measured"), leaves out the first ceiling and the last trial's end: a little short
    import json
    from datetime import datetime

    facts = json.loads((DATASETS / name / "facts.json").read_text())

    def at(stamp):
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))

    # a run resumed after its file gained steps ran in parts: their spans add up
    ran = sum((at(r["last"]) - at(r["first"])).total_seconds()
              for r in facts["measured"].get("runs", [facts["measured"]]))
    estimated = sum(e.seconds for e in campaign.estimate(campaign.load(DATASETS / name / "campaign.yaml")))
    assert 0.6 < estimated / ran < 1.4, (name, estimated, ran)


@pytest.fixture
def fake_steps(monkeypatch):
    """Steps that record their calls (and an environment record) instead of measuring; the
    ceiling is 123456 pps; neither root nor engines needed."""
    calls, ceilings = [], []

    def fake(step, out, ceiling, announce, settings, progress):
        calls.append((step.number, ceiling))
        datasets.record_environment(out, f"step-{step.number}", "test")
        return f"report of step {step.number}"

    for name in campaign.RUNNERS:
        monkeypatch.setitem(campaign.RUNNERS, name, fake)
    monkeypatch.setattr(campaign, "check", lambda c, steps, settings: None)
    monkeypatch.setattr(capabilities, "require_root", lambda settings=None: None)
    monkeypatch.setattr(measurement, "generator_ceiling", lambda **kw: ceilings.append(1) or 123456.0)
    return calls, ceilings


def three_steps_data() -> dict:
    data = copy.deepcopy(GOOD)
    data["steps"].append({"reroute": {"runs": 1}})
    return data


def three_steps(tmp_path) -> Path:
    return write(tmp_path, three_steps_data())


def test_a_rerun_skips_the_finished_steps_and_reuses_the_ceiling(tmp_path, fake_steps, monkeypatch):
    calls, ceilings = fake_steps
    c = campaign.load(three_steps(tmp_path))
    out = tmp_path / "out"
    real = campaign.RUNNERS["reroute"]

    def interrupted(step, out, ceiling, announce, settings, progress):
        raise KeyboardInterrupt

    monkeypatch.setitem(campaign.RUNNERS, "reroute", interrupted)
    lines, reports = [], []
    with pytest.raises(KeyboardInterrupt):
        campaign.run(c, out, announce=lines.append, report=reports.append)
    # the measure step alone takes the ceiling; the bench measures its own
    assert calls == [(1, 123456.0), (2, None)] and ceilings == [1]
    assert reports == ["report of step 1", "report of step 2"]
    assert lines[-1].startswith("step 3 of 3 (0:00:0") and lines[-1].endswith("routerlab reroute --runs 1")
    progress = yaml.safe_load((out / campaign.PROGRESS_FILE).read_text())
    assert progress["campaign"] == c.label and progress["ceiling_pps"] == 123456.0
    assert progress["generator"] == capabilities.runnable(Settings().generator)
    assert [f["step"] for f in progress["finished"]] == [1, 2]
    assert (out / "campaign.yaml").read_bytes() == c.text
    # resumed with the other generator: refused before a step runs, naming the one to give
    other = "rlgen" if progress["generator"] == "xdp" else "xdp"
    if capabilities.runnable(other) == other:
        with pytest.raises(ParameterError, match=f"--generator {progress['generator']}"):
            campaign.run(c, out, announce=lines.append, report=reports.append, settings=Settings.asked(other))

    monkeypatch.setitem(campaign.RUNNERS, "reroute", real)
    lines.clear()
    campaign.run(c, out, announce=lines.append)
    assert calls[2:] == [(3, None)] and ceilings == [1]  # only the step left; the ceiling recorded
    assert lines[0] == "resuming with the generator ceiling this campaign measured: 123456 pps"
    assert lines[1].startswith("step 1 of 3: finished before, skipped: routerlab measure --engine linux")
    assert lines[1].endswith("--ceiling 123456")
    campaign.run(c, out, announce=lines.append)
    assert len(calls) == 3 and lines[-1].startswith("every step of")
    # every environment record made meanwhile names the campaign and its hash
    rec = datasets.read_experiments(out).set_index("experiment")
    assert list(rec.index) == ["step-1", "step-2", "step-3"]
    assert (rec["campaign"] == f"campaign.yaml sha256:{c.sha256}").all()


def given(request) -> dict:
    """A measurement request's options (but its engine, scenario, folder and testbed settings)."""
    import dataclasses

    return {f.name: getattr(request, f.name) for f in dataclasses.fields(request)
            if f.init and f.name not in ("engine", "scenario", "out", "settings")}


def options(**kw) -> dict:
    """The options (:func:`given`) of a request made with ``kw``, the others its defaults."""
    return given(measurement.Request("linux", "single-flow", "unused", **kw))


def test_the_steps_call_the_library_as_their_commands_did(tmp_path, monkeypatch):
    # testbed-veth's steps through the real step runners, the measuring itself recorded
    from routerlab.measuring import search
    from routerlab.benchmarks import engines

    seen = []
    monkeypatch.setattr(measurement, "measure", lambda request, **kw: seen.append(
        (request.engine, request.scenario, given(request))) or [])
    monkeypatch.setattr(engines, "run", lambda *a, **kw: seen.append(
        ("bench engines", a, {k: v for k, v in kw.items() if k != "settings"})) or (1.0, pd.DataFrame()))
    monkeypatch.setattr(engines, "report", lambda ceil, df: "")
    monkeypatch.setattr(search, "format_ratios", lambda res: [])
    monkeypatch.setattr(measurement, "generator_ceiling", lambda **kw: 359250.0)
    monkeypatch.setattr(campaign, "check", lambda c, steps, settings: None)
    monkeypatch.setattr(capabilities, "require_root", lambda settings=None: None)
    c = campaign.load(DATASETS / "testbed-veth" / "campaign.yaml")
    campaign.run(c, tmp_path)
    fractions = ",".join(f"{x:g}" for x in c.steps[0].options["loads_frac"])
    assert seen[0] == ("linux", "single-flow", options(ceiling_pps=359250.0, loads_frac=fractions, runs=10, duration=1))
    assert seen[6][2]["loads"].startswith("5000,10000,") and seen[6][2]["ceiling_pps"] == 359250.0
    assert seen[7] == ("linux", "single-flow", options(ceiling_pps=359250.0, search="both", duration=1))
    assert seen[13] == ("linux", "single-flow", options(search="both", methods=("routerlab", "mlrsearch"),
                                                        experiment="bench-search-linux-single-flow", duration=1,
                                                        repeats=1))
    assert seen[14] == ("bench engines", (), {"out": tmp_path, "duration": 1, "engine_names": ("linux", "nft", "ebpf"),
                                              "announce": ANY})
    assert len(seen) == 15


def test_a_folder_of_another_campaign_is_refused_before_anything_runs(tmp_path, fake_steps):
    calls, _ = fake_steps
    out = tmp_path / "out"
    campaign.run(campaign.load(write(tmp_path, GOOD)), out)
    changed = copy.deepcopy(GOOD)
    changed["steps"][0]["measure"]["runs"] = 3
    changed["steps"].append({"reroute": {"runs": 1}})  # a step added too does not make it the same campaign
    for data in (changed, {**GOOD, "ceiling": None}):
        with pytest.raises(RouterlabError, match="holds another campaign"):
            campaign.run(campaign.load(write(tmp_path, {k: v for k, v in data.items() if v is not None})), out)
    assert len(calls) == 2


def test_a_campaign_that_gained_steps_resumes_its_run_keeping_the_steps_finished(tmp_path, fake_steps):
    calls, ceilings = fake_steps
    out = tmp_path / "out"
    first = campaign.load(write(tmp_path, GOOD))
    campaign.run(first, out)
    grown = campaign.load(write(tmp_path, {**three_steps_data(), "description": "It says more now."}))
    lines = []
    campaign.run(grown, out, announce=lines.append)
    assert calls == [(1, 123456.0), (2, None), (3, None)] and ceilings == [1]
    assert any(line.endswith("its 2 finished step(s) are kept") and first.label in line for line in lines)
    assert (out / "campaign.yaml").read_bytes() == grown.text
    progress = yaml.safe_load((out / campaign.PROGRESS_FILE).read_text())
    assert progress["campaign"] == grown.label and progress["grown_from"] == [first.label]
    assert [f["step"] for f in progress["finished"]] == [1, 2, 3]
    # each record names the file that ran it
    named = datasets.read_experiments(out).set_index("experiment")["campaign"]
    assert list(named) == [first.label, first.label, grown.label]
    lines.clear()
    campaign.run(grown, out, announce=lines.append)
    assert lines == [f"every step of {grown.path} is finished in {out}"]


def test_a_grown_campaign_replaces_an_earlier_copy_even_without_its_progress_and_says_so_once(tmp_path, fake_steps,
                                                                                             monkeypatch):
    calls, _ = fake_steps
    out = tmp_path / "out"
    first = campaign.load(write(tmp_path, GOOD))
    campaign.run(first, out)
    (out / campaign.PROGRESS_FILE).unlink()  # e.g. lost to an interruption before the ceiling was written
    grown = campaign.load(three_steps(tmp_path))
    real = campaign.RUNNERS["reroute"]
    monkeypatch.setitem(campaign.RUNNERS, "reroute", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    lines = []
    with pytest.raises(KeyboardInterrupt):
        campaign.run(grown, out, announce=lines.append)
    # nothing was recorded finished: every step runs again, and the copy is the new file
    assert calls[2:] == [(1, 123456.0), (2, None)]
    assert sum("adds steps to the campaign run" in line for line in lines) == 1
    assert (out / "campaign.yaml").read_bytes() == grown.text
    assert set(datasets.read_experiments(out)["campaign"]) == {grown.label}
    # resumed again: the copy is already the new file; nothing to say about growing
    monkeypatch.setitem(campaign.RUNNERS, "reroute", real)
    lines.clear()
    campaign.run(grown, out, announce=lines.append)
    assert calls[4:] == [(3, None)] and not any("adds steps" in line for line in lines)
    progress = yaml.safe_load((out / campaign.PROGRESS_FILE).read_text())
    assert progress["grown_from"] == [first.label]


def test_a_record_outside_a_campaign_and_an_old_file_have_an_empty_campaign(tmp_path):
    rec = datasets.record_environment(tmp_path, "alone", "test")
    assert rec["campaign"] == ""
    old = pd.read_csv(DATASETS / "testbed-bmv2" / "experiments.csv", dtype=str, keep_default_na=False)
    old.drop(columns=["campaign"], errors="ignore").to_csv(tmp_path / "experiments.csv", index=False)
    assert (datasets.read_experiments(tmp_path)["campaign"] == "").all()


def test_a_missing_engine_is_named_with_its_step_before_anything_runs(tmp_path, monkeypatch):
    from routerlab.errors import EngineNotFound

    def missing(engine, *a, **kw):
        raise EngineNotFound(f"{engine}: not built")

    monkeypatch.setattr(measurement, "resolve", missing)
    path = write(tmp_path, GOOD)
    with pytest.raises(RouterlabError, match=rf"^{path}: step 1 \(measure\): linux: not built$"):
        campaign.run(campaign.load(path), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_compare_takes_its_defaults_from_the_comparisons_campaign_file(tmp_path, monkeypatch):
    steps = campaign.load(DATASETS / "comparison" / "campaign.yaml").steps
    (step,) = [s for s in steps if s.name == "compare"]
    # and a repeated PDR search of every cell the sweeps did not grey
    grey = pd.read_csv(DATASETS / "comparison" / "cells.csv").query("not runnable")
    searched = {(s.options["engine"], s.options["scenario"]) for s in steps if s.options.get("search") == "pdr"}
    assert len(searched) == len(steps) - 1 == len(step.options["engines"]) * len(step.options["scenarios"]) - len(grey)
    assert tables.scenarios()["single_flow_50fw"] == "single-flow-fw50"
    seen = []
    # every cell runnable, whatever is built here: the plan, not the engines, is tested
    monkeypatch.setattr(measurement, "resolve", lambda engine, scenario, *a, **kw: (None, None))
    monkeypatch.setattr(measurement, "measure", lambda request, **kw: seen.append(request))
    comparison.campaign(tmp_path, ceiling_pps=1e5)
    cells = pd.read_csv(tmp_path / "cells.csv")
    assert len(cells) == len(step.options["engines"]) * len(step.options["scenarios"]) == len(seen)
    fractions = ",".join(f"{x:g}" for x in step.options["loads_frac"])
    assert {(r.loads_frac, r.runs, r.duration) for r in seen} == {(fractions, 5, 2)}


def test_compare_refuses_a_bad_plan_before_measuring_the_ceiling(tmp_path, monkeypatch):
    """A fraction out of range used to grey every cell, one by one, after the ceiling."""
    monkeypatch.setattr(measurement, "generator_ceiling", lambda *a, **k: pytest.fail("measured the ceiling"))
    for kw in ({"fractions": [2.0]}, {"duration": -1}, {"runs": 0}):
        with pytest.raises(ParameterError):
            comparison.campaign(tmp_path, **kw)
    assert not (tmp_path / "cells.csv").exists()


def test_a_bench_search_step_without_mlrsearch_stops_before_step_one(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "MLRsearch" else real(name, *a))
    monkeypatch.setattr(measurement, "resolve", lambda *a, **kw: (None, None))
    path = write(tmp_path, with_step(1, {"bench": {"benchmark": "search", "engine": "linux",
                                                   "scenario": "single-flow", "kind": "both"}}))
    with pytest.raises(RouterlabError, match=r"step 2 \(bench search\): .*routerlab\[mlrsearch\]"):
        campaign.run(campaign.load(path), tmp_path / "out")
    assert not (tmp_path / "out").exists()


runner = CliRunner()


def test_campaign_show_prints_the_steps_and_the_estimate():
    r = runner.invoke(app, ["campaign", "show", str(DATASETS / "testbed-bmv2" / "campaign.yaml")])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[2].startswith("the generator's ceiling, measured once")
    assert lines[3] == "step 1 of 2: " + ("routerlab measure --engine bmv2 --scenario single-flow --loads-frac "
                                          "0.001,0.002,0.004,0.006,0.008,0.01,0.0125,0.015,0.02,0.03 --runs 10 --duration 1"
                                          " --ceiling C")
    assert lines[4].startswith("    100 trials, 100 s + ")
    assert lines[5] == "step 2 of 2: routerlab bench engines --engine linux --engine bmv2 --duration 1 --repeats 3"
    assert lines[-1].startswith("estimated total: about ")


def test_campaign_show_takes_the_dataset_folder_for_its_file():
    folder = DATASETS / "testbed-bmv2"
    by_file = runner.invoke(app, ["campaign", "show", str(folder / "campaign.yaml")])
    by_folder = runner.invoke(app, ["campaign", "show", str(folder)])
    assert by_folder.exit_code == 0 and by_folder.stdout == by_file.stdout


def test_campaign_show_and_run_fail_in_one_line(tmp_path, monkeypatch):
    bad = write(tmp_path, with_step(0, {"measure": {"engine": "danos", "scenario": "single-flow", "loads": [1]}}))
    for args in (["show", str(bad)], ["run", str(bad), "--out", str(tmp_path / "o")]):
        r = runner.invoke(app, ["campaign", *args])
        assert r.exit_code == 2 and r.stdout == "" and "step 1 (measure): engine: 'danos'" in r.stderr, r.output
        assert len(r.stderr.strip().splitlines()) == 1
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    good = write(tmp_path, {**GOOD, "steps": GOOD["steps"][:1]})
    r = runner.invoke(app, ["campaign", "run", str(good), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "needs root" in r.stderr.splitlines()[-1], r.output
    assert "estimated total" in r.stderr  # said first
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("path", sorted(DATASETS.glob("*/campaign.yaml")), ids=lambda p: p.parent.name)
def test_every_step_is_a_command_line_the_cli_takes(path):
    """Each step's command (campaign show prints it) parses with the real command: a renamed
    option would show here, not in a hand-written string."""
    import click

    c = campaign.load(path)
    for step in c.steps:
        args = shlex.split(step.command("300000" if c.ceiling else None))[1:]
        cmd = app
        while isinstance(cmd, click.Group):
            name = args.pop(0)
            cmd = cmd.get_command(None, name)
            assert cmd is not None, (step.number, name)
        # --out is left out of a step's command (the campaign gives it)
        ctx = cmd.make_context(name, args + ["--out", "x"])  # a UsageError for an option it does not have
        given = {p.name for p in cmd.params
                 if ctx.get_parameter_source(p.name) == click.core.ParameterSource.COMMANDLINE}
        # every option of the step reached one of the command's parameters (a bench step's
        # "engines" is the command's repeated --engine)
        assert len(given - {"out", "ceiling"}) == len(step.options), (step.number, given, step.options)
