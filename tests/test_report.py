"""Generated reports: the facts of a dataset against a worked example, the README and
facts.json of a small fixture as golden files, NOTES.md fields, and ``report --check`` of
every committed dataset (each README is exactly what its files give)."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from routerlab.analysis import datasets
from routerlab.publish import facts, report, templates
from routerlab.cli.app import app
from routerlab.errors import DataFormatError

DEMO = Path(__file__).parent / "data" / "report-demo"


@pytest.fixture
def demo(tmp_path) -> Path:
    """A copy of the fixture dataset (made up, labelled so in its experiments.csv)."""
    return Path(shutil.copytree(DEMO, tmp_path / "report-demo"))


def test_sweep_facts_worked_example():
    """The fixture's sweep by hand: loads 1,000-4,000 pps, K = 3. Losses 0 / 0, 0, 0.005 /
    0.01, 0.02, 0.03 / 0.26 x 3 (a fourth trial at 4,000 pps the generator could not offer
    is left out). PDR@0.5%: 2,000 (3,000 has mean 0.02); NDR: 1,000 (a trial at 2,000
    lost); TIR at 4,000 = (2,960 - 2,940) / 1,000 = 0.02 < 0.3, the last load: GOOD."""
    s = facts.sweeps(DEMO)["linux-single-flow"]
    assert (s["pdr"]["pps"], s["pdr"]["status"]) == (2000, "found")
    assert (s["ndr"]["pps"], s["ndr"]["status"]) == (1000, "found")
    assert s["verdict"]["label"] == "GOOD" and s["saturation_pps"] == 4000
    assert s["trials"] == 13 and s["generator_limited"] == 1 and s["runs"] == 3
    rows = {r["offered_pps"]: r for r in s["table"]}
    assert rows[2000]["plr"] == pytest.approx(0.005 / 3)
    assert rows[2000]["median"] == 0 and rows[2000]["worst"] == pytest.approx(0.005)
    assert rows[3000]["plr"] == pytest.approx(0.02) and rows[3000]["lossy"] == 3
    assert rows[4000]["tir"] == pytest.approx(0.02)
    assert rows[4000]["throughput_pps"] == pytest.approx(2960)
    assert rows[4000]["runs"] == 3  # the generator-limited trial is not counted
    assert rows[1000]["tir"] is None


def test_search_facts():
    s = facts.searches(DEMO)["bench-pdr-linux-single-flow"]["pdr"]["routerlab"]
    assert s["answer"] == "2,500 pps (one repeat)" and not s["at_least"] and s["bound"] == ""
    assert s["repeats"] == 1 and s["each_pps"] == [2500] and s["spread"] is None
    assert (s["lower_pps"], s["upper_pps"], s["precision"]) == (2500, 2600, 0.04)
    # the full-length (1-s) trials only: the short one at 10,000 pps is not at either load
    assert s["losses_at_answer"] == [0, 0.002, 0]
    assert s["losses_at_failing"] == pytest.approx([100 / 2600, 10 / 2600, 200 / 2600])
    assert s["generator_limited_trials"] == 0 and s["full_trial_s"] == 1


def test_search_answers_that_are_lower_bounds(demo):
    """No failing load: passed at the ceiling; a limited trial at the failing load: limited
    by the generator. Both are "at least"."""
    res = demo / "search_results.csv"
    text = res.read_text()
    res.write_text(text.replace("2500.0,2600.0,", "2500.0,,"))
    s = facts.searches(demo)["bench-pdr-linux-single-flow"]["pdr"]["routerlab"]
    assert s["at_least"] and s["bound"] == "passed at the ceiling" and s["answer"].startswith("at least 2,500")
    res.write_text(text)
    trials = demo / "search_trials.csv"
    trials.write_text(trials.read_text().replace("2600,1.0,2600,2500,False,False", "2600,1.0,2600,2500,False,True"))
    s = facts.searches(demo)["bench-pdr-linux-single-flow"]["pdr"]["routerlab"]
    assert s["bound"] == "limited by the generator" and s["at_least"]


def test_validation_facts_count_each_reason():
    """The fixture's trial at 2,000 pps was set aside twice: once for steal (5% > 2%),
    once for a stop of 20 ms (up to 22) against a 5-ms queue, with 10 packets lost (44
    offered during the stop): one attempt per reason."""
    v = facts.validation(DEMO)
    assert v["sweep"]["set_aside"] == 2 and v["sweep"]["measured_again"] == 1
    assert v["sweep"]["set_aside_for"] == {"steal": 1, "stop": 1, "lag": 0}
    assert v["sweep"]["steal_max"] == pytest.approx(0.004)
    assert v["search"]["set_aside"] == 0
    # the steal of every attempt, kept or set aside: one of 15 above the 2% threshold
    assert (v["sweep"]["steal_above"], v["sweep"]["attempts"]) == (1, 15)
    assert (v["sweep"]["set_aside_lossy"], v["sweep"]["set_aside_lost"]) == (2, 30)
    assert v["sweep"]["experiments"]["linux-single-flow"]["set_aside"] == 2


def test_loss_facts_add_up():
    """Lost: 10 + (30 + 60 + 90) + 3 x 1,040 = 3,310; counters took 3,190 (dut
    CPU_BACKLOG); 120 unexplained (40 in each trial at 4,000 pps)."""
    loss = facts.loss(DEMO)
    assert (loss["lost"], loss["attributed"], loss["unexplained"]) == (3310, 3190, 120)
    assert loss["by_counter"] == {"dut CPU_BACKLOG": 3190}
    assert loss["experiments"] == {"linux-single-flow": {"dut CPU_BACKLOG": 3190}}


def test_environment_facts():
    e = facts.environment(DEMO)
    assert e["routerlab"] == "0.1.0 (git abc1234)" and e["ceilings_pps"] == [100000]
    assert e["experiments"]["linux-single-flow"]["notes"]["router_queue_packets"] == "1000"


def test_fixture_report_is_the_golden_files():
    """README.md and facts.json of the fixture are golden files: what the report writes
    for these CSVs, reviewed by hand. A change of the template or the facts shows here
    first, as a diff."""
    assert report.check(DEMO) == []


def test_check_prints_a_diff_when_a_number_changes(demo):
    trials = demo / "trials.csv"
    trials.write_text(trials.read_text().replace(",3000,2910,", ",3000,2700,"))
    diffs = report.check(demo)
    assert diffs and "(committed)" in diffs[0] and "(generated)" in diffs[0]
    assert any(line.startswith("-") and "3.0%" in line for line in "".join(diffs).splitlines())


def test_check_names_a_missing_figure(demo):
    shutil.rmtree(demo / "figures")
    assert any("figures/sweeps-single-flow.png" in d and "missing" in d for d in report.check(demo))


def test_notes_fields_render_from_the_facts(demo):
    text = report.render(demo)
    assert "Its sweep passes 2,000 pps and its search\nanswers 2,500 pps (one repeat)." in text


def test_a_field_that_does_not_exist_fails_naming_it(demo):
    (demo / "NOTES.md").write_text("Intro line.\nThe PDR was {{ sweeps['linux-single-flow'].pdr.ppss | pps }}.\n")
    with pytest.raises(DataFormatError) as e:
        report.render(demo)
    assert "NOTES.md:2" in str(e.value) and "ppss" in str(e.value)


def test_a_number_typed_by_hand_fails_naming_its_line(demo):
    (demo / "NOTES.md").write_text("The sweep, {{ sweeps['linux-single-flow'].pdr.pps | pps }} pps,\nlost 3,310 packets.\n")
    with pytest.raises(DataFormatError) as e:
        report.render(demo)
    assert "NOTES.md:2" in str(e.value) and "'3,310'" in str(e.value)


@pytest.mark.parametrize("text, typed", [
    ("PDR@0.5% on IPv4 with fw50 and P4_16", []),
    ("`64` bytes, a [link](../x-2.md) and {{ a.b | pps }}", []),
    ("{# 12 #}{% if x > 3 %}ok{% endif %}", []),
    ("```\n123\n```", []),
    ("about 27 kpps", [(1, "27")]),
    ("lost 0.41% and 1,204 packets", [(1, "0.41"), (1, "1,204")]),
    ("line one\n2026-11-26", [(2, "2026")]),
])
def test_typed_numbers(text, typed):
    assert templates.typed_numbers(text) == typed


@pytest.mark.parametrize("ratio, shown", [(0, "0"), (0.0043, "0.43%"), (0.25, "25%"), (7.6e-05, "0.0076%"),
                                          (0.024, "2.4%"), (None, "n/a")])
def test_loss_format(ratio, shown):
    assert templates.loss(ratio) == shown


def test_changes_between_two_facts():
    old = {"a": 1, "b": {"c": [1, 2]}, "gone": True}
    new = {"a": 1, "b": {"c": [1, 3, 4]}, "new": "x"}
    assert facts.changes(old, new) == [("b.c[1]", 2, 3), ("b.c[2]", None, 4), ("new", None, "x"), ("gone", True, None)]


def test_report_since_prints_what_changed(demo, tmp_path):
    before = tmp_path / "before.json"
    shutil.copy(demo / "facts.json", before)
    trials = demo / "trials.csv"
    trials.write_text(trials.read_text().replace(",3000,2910,", ",3000,2700,"))
    r = CliRunner().invoke(app, ["report", str(demo), "--no-figures", "--since", str(before)])
    assert r.exit_code == 0, r.output
    assert "sweeps.linux-single-flow.lost: 3310 -> 3520" in r.output


def test_report_command_on_a_folder_without_records(tmp_path):
    r = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert r.exit_code == 1 and "experiments.csv" in r.output + r.stderr


def test_committed_datasets_are_every_measured_one():
    names = {p.name for p in datasets.committed()}
    assert {"testbed-veth", "testbed-click", "testbed-bmv2", "click-course", "comparison", "microbench",
            "fast-reroute"} <= names
    assert "reference" not in names  # transcribed from publications: no report


@pytest.mark.parametrize("folder", datasets.committed(), ids=lambda p: p.name)
def test_every_committed_readme_is_generated_from_its_files(folder):
    """``routerlab report --check`` for one dataset: its README and facts.json are what
    its files give now. On failure: run ``routerlab report datasets/<name>`` and read the
    README's diff."""
    diffs = report.check(folder)
    assert not diffs, "\n".join(diffs)


def test_facts_json_is_plain_json():
    data = json.loads((DEMO / "facts.json").read_text())
    assert data["dataset"] == "report-demo" and "sweeps" in data


def test_bench_report_prints_the_time_next_to_its_floor_and_target():
    from routerlab.benchmarks import report as bench

    text = bench.report({"datasets": 7, "files": 38, "check_s": 6.0, "floor_s": 1.5, "repeat": 3})
    assert "6.00 s" in text and "4.0x the floor" in text and "target <= 30 s: met" in text
    assert "MISSED" in bench.report({"datasets": 7, "files": 38, "check_s": 31.0, "floor_s": 1.5, "repeat": 3})


def test_report_check_command_exit_status(demo):
    ok = CliRunner().invoke(app, ["report", "--check", str(demo)])
    assert ok.exit_code == 0 and f"{demo}: ok" in ok.output
    (demo / "NOTES.md").write_text("A changed note, made up.\n")
    bad = CliRunner().invoke(app, ["report", "--check", str(demo)])
    assert bad.exit_code == 1 and f"{demo}: differs" in bad.output and "+A changed note, made up." in bad.output


def test_each_record_is_judged_with_the_burst_it_was_measured_with(demo):
    """A set-aside attempt that lost 10 packets more than its stop (read 3.0 ms, so up to
    5.0 ms) offered by the rate: a record made before validation counted the generator's
    burst (no ``generator_burst`` in its notes) did not hold the stop against it; one with
    ``generator_burst=32`` does."""
    import pandas as pd

    again = pd.read_csv(demo / "superseded_trials.csv")
    lost = int(again.loc[1, "offered_pps"] * 5.0 / 1e3) + 10
    again.loc[1, ["cpu_stop_ms", "queue_ms", "lost", "steal"]] = [3.0, 0.5, lost, 0.0]
    again.to_csv(demo / "superseded_trials.csv", index=False)
    assert facts.validation(demo)["sweep"]["set_aside_for"]["stop"] == 0
    records = pd.read_csv(demo / "experiments.csv")
    records["notes"] = records["notes"].str.replace("probe_period_ms=2.0", "probe_period_ms=2.0; generator_burst=32")
    records.to_csv(demo / "experiments.csv", index=False)
    assert facts.validation(demo)["sweep"]["set_aside_for"]["stop"] == 1


def test_each_record_is_judged_with_the_router_steal_rule_it_was_measured_with(demo):
    """A set-aside attempt that lost what a tick of steal on the router's CPU offered, its
    probe reading a 4-ms stop (too short alone): a record made before that steal was held
    (no ``router_steal_held`` in its notes) did not hold it; one with
    ``router_steal_held=1`` does."""
    import pandas as pd

    again = pd.read_csv(demo / "superseded_trials.csv")
    lost = int(again.loc[1, "offered_pps"] * 8.0 / 1e3)
    again.loc[1, ["cpu_stop_ms", "queue_ms", "lost", "steal", "router_steal"]] = [4.0, 0.5, lost, 0.0, 0.01]
    again.to_csv(demo / "superseded_trials.csv", index=False)
    before = facts.validation(demo)["sweep"]["set_aside_for"]
    records = pd.read_csv(demo / "experiments.csv")
    records["notes"] = records["notes"].str.replace("probe_period_ms=2.0", "probe_period_ms=2.0; router_steal_held=1")
    records.to_csv(demo / "experiments.csv", index=False)
    assert facts.validation(demo)["sweep"]["set_aside_for"] == {**before, "steal": before["steal"] + 1}


def test_each_record_is_judged_with_the_stop_floor_it_was_measured_with(demo):
    """A set-aside attempt whose probe read a 1.0-ms stop against a 0.5-ms queue, 2 packets
    lost: a record made before the stop floor existed (no ``stop_floor_ms`` in its notes)
    was judged with the probe's 2-ms period as the floor, so the stop did not count; a
    record with the 0.5-ms floor counts it."""
    import pandas as pd

    again = pd.read_csv(demo / "superseded_trials.csv")
    again.loc[1, ["cpu_stop_ms", "queue_ms", "rx", "lost", "lost_attributed"]] = [1.0, 0.5, 1998, 2, 2]
    again.to_csv(demo / "superseded_trials.csv", index=False)
    assert facts.validation(demo)["sweep"]["set_aside_for"] == {"steal": 1, "stop": 0, "lag": 0}
    records = pd.read_csv(demo / "experiments.csv")
    records["notes"] = records["notes"].str.replace("probe_period_ms=2.0", "probe_period_ms=2.0; stop_floor_ms=0.5")
    records.to_csv(demo / "experiments.csv", index=False)
    assert facts.validation(demo)["sweep"]["set_aside_for"] == {"steal": 1, "stop": 1, "lag": 0}
