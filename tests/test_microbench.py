"""In-memory microbenchmarks: the element package builds, the consolidated chain sends
out exactly what the plain chain does, and the cost arithmetic. Skipped where Click (or
FastClick, or valgrind) is not built."""

import shutil
import subprocess

import pandas as pd
import pytest
from conftest import engine_absent

from routerlab.analysis import datasets
from routerlab.analysis import microbench as tables
from routerlab.measuring import microbench
from routerlab.benchmarks import consolidation
from routerlab.errors import EngineNotFound, RouterlabError

try:
    CLICK = microbench.click_binary("click")
except EngineNotFound as e:
    pytestmark = pytest.mark.engine_absent(f"Click not built: {e}")


@pytest.fixture(scope="module")
def package():
    return microbench.build_package()


@pytest.fixture(scope="module", params=["click", "fastclick"])
def flavour(request):
    """Each Click flavour with routerlab's element package built against it."""
    try:
        binary = microbench.click_binary(request.param)
    except EngineNotFound as e:
        engine_absent(str(e))
    return binary, microbench.build_package(binary)


def _run_chain(tmp_path, binary, package, kind, n, cached, flows, edit):
    """Run the benchmark's chain configuration (plain or cached) of ``n`` NFs of ``kind``
    on ``flows``, its text changed by ``edit`` (to print more); the finished process."""
    microbench.write_configs(tmp_path)
    microbench.write_chain(tmp_path, kind, n)
    microbench.write_pcap(tmp_path / "p.pcap", flows)
    conf = tmp_path / microbench.CONFIGS["consolidated" if cached else "chain"]
    conf.write_text(edit(conf.read_text()))
    p = subprocess.run([binary, str(conf), f"PCAP={tmp_path / 'p.pcap'}"], capture_output=True, text=True,
                       cwd=tmp_path, env={"CLICKPATH": f"{package}:", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    return p


def _print_chain(tmp_path, flavour, kind, n, cached, flows):
    p = _run_chain(tmp_path, *flavour, kind, n, cached, flows, lambda conf: conf.replace(
        "-> out :: Counter", "-> IPPrint(x, CONTENTS true, TIMESTAMP false, LENGTH true) -> out :: Counter"))
    return [ln for ln in p.stderr.splitlines() if not ln.startswith("Warning")]  # every packet: header, hex


@pytest.mark.parametrize("kind", ["MazuNAT", "Maglev", "IPFilter"])
def test_consolidated_chain_sends_what_the_chain_sends(tmp_path, flavour, kind):
    flows = [i % 7 for i in range(40)]  # 7 flows, first packets first, then repeats
    plain = _print_chain(tmp_path, flavour, kind, 3, False, flows)
    cached = _print_chain(tmp_path, flavour, kind, 3, True, flows)
    assert sum(line.startswith("x:") for line in plain) == 40
    if "fastclick" in flavour[0]:
        # FastClick passes batches: Maglev's HashSwitch splits one into a batch per backend,
        # so the plain chain lets packets out grouped by backend, not in arrival order
        assert sorted(_packets(cached)) == sorted(_packets(plain))
    else:
        assert cached == plain  # the same bytes (addresses, ports, checksums), packet by packet


def _packets(lines: list[str]) -> list[str]:
    """IPPrint's output, one string per packet (its header line and its hex lines)."""
    out: list[str] = []
    for ln in lines:
        if ln.startswith("x:"):
            out.append(ln)
        else:
            out[-1] += ln
    return out


def test_cache_counts_first_and_later_packets(tmp_path, package):
    p = _run_chain(tmp_path, CLICK, package, "MazuNAT", 2, True, [i % 5 for i in range(50)], lambda conf: conf.replace(
        "print out.count,", "print out.count, print cache.misses, print cache.hits, print cache.flows,"))
    assert p.stdout.split() == ["50", "5", "45", "5"]


def test_the_configurations_are_files_run_with_defines(tmp_path):
    """forwarding.click run on its own forwards the packet routerlab passes it; the chain
    is the only generated part (0 NFs: the source alone, through Null)."""
    microbench.write_configs(tmp_path)
    run = microbench.run_click(CLICK, microbench.CONFIGS["forwarding"], tmp_path, {"PACKETS": 7, "BURST": 4})
    assert run.output.split() == ["7", "0"]
    text = (microbench.configs_dir() / microbench.CONFIGS["forwarding"]).read_text()
    assert f"$FRAME {microbench.forwarding_defines(1)['FRAME']}," in text  # the default is the passed frame
    assert "input -> Null -> output" in microbench.chain_click("MazuNAT", 0)
    assert microbench.chain_click("Maglev", 2).count("LoadBalancer(") == 2
    with pytest.raises(RouterlabError, match="unknown network function"):
        microbench.chain_click("Firewall", 1)


def test_forwarding_counts_packets_and_instructions():
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed (Debian package valgrind)")
    rows = microbench.forwarding("click", packets=20_000, repeats=1, callgrind_packets=2_000)
    assert len(rows) == 1 and rows[0]["mpps"] > 0
    assert 200 < rows[0]["instructions_per_packet"] < 20_000  # a router, not a no-op nor a stall


def test_save_writes_the_runs_and_the_one_environment_record(tmp_path):
    rows = pd.DataFrame([{"engine": "click", "burst": 32, "repeat": 0, "packets": 10, "mpps": 1.0,
                          "ns_per_packet": 1000.0, "instructions_per_packet": 1500.0}])
    microbench.save(rows, tmp_path, "forwarding", ["click", "fastclick"], "routerlab bench forwarding")
    pd.testing.assert_frame_equal(datasets.read_microbench(tmp_path, "forwarding"), rows)
    rec = datasets.read_experiments(tmp_path).set_index("experiment").loc["forwarding"]
    assert rec["engine"] == "click; fastclick" and rec["engine_version"].count("; ") == 1
    assert rec["versions"].startswith("routerlab: ") and "; valgrind: " in rec["versions"]
    assert "; python: 3." in rec["versions"]
    assert rec["command"] == "routerlab bench forwarding" and rec["source"].startswith("routerlab microbenchmark")


def test_reductions_and_formats_from_rows():
    rows = []
    for nf in ("MazuNAT",):
        for n, chain in ((2, 1000.0), (3, 1500.0)):
            for variant, later in (("chain", chain), ("consolidated", 500.0)):
                rows.append({"nf": nf, "actions": n, "variant": variant, "packet": "later", "repeat": 0,
                             "instructions": later, "ns": later / 10})
                rows.append({"nf": nf, "actions": n, "variant": variant, "packet": "first", "repeat": 0,
                             "instructions": 3 * later, "ns": later / 3})
    red = tables.reductions(pd.DataFrame(rows))
    assert red["reduction_instructions"].round(3).tolist() == [0.5, 0.667]
    text = consolidation.report(pd.DataFrame(rows))
    assert "43" in text and "64" in text  # the published BESS figures (43.2, 63.5) stand next to ours
