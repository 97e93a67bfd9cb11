"""Shared fixtures: data locations, a seeded RNG, and figures closed after each test."""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(os.environ.get("ROUTERLAB_PASTRAMI_SAMPLE", ROOT.parent / "shared" / "datasets" / "pastrami-sample"))


#: Set by `make test` and CI after `routerlab engines install`: an engine that is missing
#: then fails its test instead of skipping it.
REQUIRE_ENGINES = os.environ.get("ROUTERLAB_REQUIRE_ENGINES") == "1"


def engine_absent(reason: str):
    """Skip a test whose engine is not there, naming what is missing; with
    ROUTERLAB_REQUIRE_ENGINES=1, fail it."""
    if REQUIRE_ENGINES:
        pytest.fail(f"{reason} (ROUTERLAB_REQUIRE_ENGINES=1: a missing engine fails its test)", pytrace=False)
    pytest.skip(reason)


def checked_engine(name: str, sc=None):
    """The engine ``name``, after its check for scenario ``sc``; if it is not ready, the
    test skips naming why (:func:`engine_absent`)."""
    from routerlab import engines

    eng = engines.get(name)
    try:
        eng.check(sc)
    except Exception as e:  # noqa: BLE001
        engine_absent(str(e))
    return eng


def engine_marks(what: str, find):
    """Marks for the tests that need an engine: (needs it, needs it and root). ``find()``
    raises a RouterlabError saying what is missing; both marks then skip naming it (fail
    under ROUTERLAB_REQUIRE_ENGINES=1); the second also skips without root."""
    from routerlab.errors import RouterlabError

    try:
        find()
    except RouterlabError as e:
        absent = pytest.mark.engine_absent(f"{what} not built: {e}")
        return absent, absent
    return (pytest.mark.skipif(False, reason=""),
            pytest.mark.skipif(os.geteuid() != 0, reason="needs root: network namespaces"))


def pytest_runtest_setup(item):
    for mark in item.iter_markers("engine_absent"):
        engine_absent(mark.args[0])


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def pastrami_sample() -> Path:
    """The 20-file PASTRAMI sample with expected verdicts (../shared/datasets/pastrami-sample)."""
    if not (SAMPLE / "verdicts.tsv").is_file():
        pytest.skip(f"PASTRAMI sample not found at {SAMPLE} (set ROUTERLAB_PASTRAMI_SAMPLE)")
    return SAMPLE


def write_raw(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path
