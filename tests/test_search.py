"""routerlab.search: the search algorithm against a model router with known thresholds,
and the MLRsearch adapter on the same model. (The model stands in for the testbed so the
algorithm can be checked exactly; real searches are in datasets/.)"""

import pytest

from routerlab import search

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
    assert r.lower <= 100_000 <= r.upper


def test_generator_limited_trials_never_pass():
    r = search.bisect(lambda load, d: (int(load * d), int(load * d), load > 200_000), kind="pdr",
                      lo=6_000, hi=600_000, final_duration=1.0)
    assert r.limited_by_generator and r.lower <= 200_000 <= r.upper


def test_bad_range_is_named():
    with pytest.raises(Exception, match="lo"):
        search.bisect(model, kind="pdr", lo=10, hi=5)


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


def test_ratios_against_mlrsearch_by_hand():
    def res(method, kind, lower, seconds):
        return search.SearchResult(method, kind, lower, lower * 1.02, 0.02, seconds, [], False)

    lines = search.format_ratios([res("routerlab", "pdr", 99_000.0, 30.0), res("mlrsearch", "pdr", 100_000.0, 60.0),
                                  res("routerlab", "ndr", 50_000.0, 20.0)])  # no MLRsearch NDR: no line
    assert lines == ["PDR: routerlab / mlrsearch answer = 0.990, trial-seconds = 0.50"]
