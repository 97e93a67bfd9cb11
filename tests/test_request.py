"""A measurement's request (measuring.measurement.Request) and the testbed's settings
(testbed.settings.Settings): checked when made, and the same options reach the sweep
whether a notebook or the command line asks. Neither root nor an engine needed."""

import dataclasses

import pytest
from click.testing import CliRunner

from routerlab.cli import app
from routerlab.errors import ParameterError
from routerlab.measuring import measurement, sweep
from routerlab.testbed.settings import Settings


@pytest.mark.parametrize("bad, name", [
    ({"loads": "1000", "runs": 0}, "runs"),
    ({"loads": "1000", "duration": -1}, "duration"),
    ({"loads": "a lot"}, "--loads"),
    ({"search": "pdx"}, "search"),
    ({"search": "pdr", "loads": "1000"}, "loads"),
    ({"loads": "1000", "pdr": 2}, "pdr"),
    ({"loads": "1000", "steal_threshold": -1}, "steal_threshold"),
    ({"loads": "1000", "max_repeats": -1}, "max_repeats"),
])
def test_a_request_with_a_bad_value_is_refused_when_made_naming_it(bad, name):
    with pytest.raises(ParameterError) as e:
        measurement.Request("linux", "single-flow", "unused", **bad)
    assert e.value.name == name and str(e.value).startswith(f"{name}: ")


def test_a_request_is_frozen_and_its_testbed_settings_default_to_the_environment(monkeypatch):
    monkeypatch.setenv("ROUTERLAB_GENERATOR", "rlgen")
    monkeypatch.setenv("ROUTERLAB_CPU_IDLE", "os")
    r = measurement.Request("linux", "single-flow", "unused", loads="1000", methods=["routerlab"])
    assert r.settings == Settings(generator="rlgen", cpu_idle="os") and not r.settings.generator_asked
    assert r.methods == ("routerlab",) and r.validation.max_repeats == measurement.Request(
        "linux", "single-flow", "unused", loads="1000").validation.max_repeats
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.runs = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.settings.generator = "xdp"
    # a changed copy is checked again
    with pytest.raises(ParameterError, match="^runs: "):
        dataclasses.replace(r, runs=0)


def test_settings_check_their_values_naming_them(monkeypatch):
    monkeypatch.delenv("ROUTERLAB_GENERATOR", raising=False)
    monkeypatch.delenv("ROUTERLAB_CPU_IDLE", raising=False)
    s = Settings()
    assert (s.generator, s.cpu_idle, s.factory, s.beyond_one_machine) == ("xdp", "poll", None, False)
    assert Settings.asked("rlgen").generator_asked and not Settings.asked(None).generator_asked
    with pytest.raises(ParameterError, match="^generator: must be one of xdp, rlgen, got 'pktgen'$"):
        Settings(generator="pktgen")
    with pytest.raises(ParameterError, match="^cpu_idle: must be one of poll, os, got 'deep'$"):
        Settings(cpu_idle="deep")

    class Factory:
        checked = []

        def __call__(self, **kw):
            return kw

        def check_engine(self, engine, scenario):
            self.checked.append(engine)

    beyond = dataclasses.replace(s, factory=Factory())
    assert beyond.beyond_one_machine and not s.beyond_one_machine
    beyond.check_engine("e", "s")
    s.check_engine("never", "s")
    assert Factory.checked == ["e"]


@pytest.fixture
def downstream(monkeypatch):
    """What measure passes on to the sweep (the plan, the folder, the ceiling, the trial
    validation and the testbed settings), the engine and root not needed."""
    seen = []
    from routerlab.engines import registry

    monkeypatch.setattr(measurement, "resolve", lambda engine, scenario, *a, **kw: (
        registry.get(engine) if isinstance(engine, str) else engine,
        measurement.scenarios.load(scenario, **{k: v for k, v in kw.items() if k != "settings" and v})))
    monkeypatch.setattr(measurement, "require_root", lambda settings=None: None)

    def run(plan, out, **kw):
        seen.append({"plan": plan, "out": str(out), **{k: kw[k] for k in ("ceiling_pps", "validation", "settings")}})
        return out

    monkeypatch.setattr(sweep, "run", run)
    return seen


@pytest.mark.parametrize("generator", [None, "rlgen"])
def test_the_same_request_from_a_notebook_and_the_command_line_reaches_the_sweep_alike(tmp_path, downstream,
                                                                                       monkeypatch, generator):
    monkeypatch.delenv("ROUTERLAB_GENERATOR", raising=False)
    out = str(tmp_path / "out")
    asked = [] if generator is None else ["--generator", generator]
    CliRunner().invoke(app, ["measure", "--engine", "linux", "--loads", "1000,2000", "--runs", "3", "--duration",
                             "0.5", "--rules", "5", "--max-repeats", "1", "--ceiling", "100000", "--out", out, *asked])
    request = measurement.Request("linux", "single-flow", out, loads="1000,2000", runs=3, duration=0.5, rules=5,
                                  max_repeats=1, ceiling_pps=100000, settings=Settings.asked(generator))
    measurement.measure(request)
    from_cli, from_notebook = downstream
    assert from_cli == from_notebook
    assert from_cli["settings"].generator == (generator or "xdp")
    assert from_cli["settings"].generator_asked == (generator is not None)
    assert from_cli["plan"].loads == [1000, 2000] and from_cli["plan"].scenario.rules == 5
    assert from_cli["validation"].max_repeats == 1


def test_a_request_carrying_the_engine_itself_names_its_experiment_by_the_engines_name(tmp_path, downstream):
    """A notebook may hand measure the engine object (one it configured): the sweep's
    experiment, which trials.csv records and a rerun resumes by, is still named by the
    engine's name."""
    from routerlab.engines import registry

    measurement.measure(measurement.Request(registry.get("linux"), "single-flow", str(tmp_path / "o"),
                                            loads="1000", runs=1, duration=0.5, ceiling_pps=100000))
    (seen,) = downstream
    assert seen["plan"].engine == "linux" and seen["plan"].experiment == "linux-single-flow"
