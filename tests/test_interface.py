"""The testbed as an interface: the :class:`routerlab.testbed.interface.Testbed` protocol,
its three implementations (none a subclass of another), and what they share
(:mod:`routerlab.testbed.lifetime`)."""

import dataclasses
import inspect
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from routerlab.errors import ParameterError, RouterlabError
from routerlab.measuring.fastreroute import RerouteNet
from routerlab.remote import testbedfile
from routerlab.remote.sshtestbed import SshTestbed
from routerlab.testbed import interface, lifetime
from routerlab.testbed.namespaces import NamespaceTestbed
from test_sshtestbed import MACS, two_hosts, write

LIB = Path(__file__).resolve().parents[1] / "lib" / "routerlab"
IMPLEMENTATIONS = (NamespaceTestbed, SshTestbed, RerouteNet)


def members() -> dict[str, object]:
    """What the protocol names: its attributes (None) and its methods (the function)."""
    out: dict[str, object] = {name: None for name in interface.Testbed.__annotations__}
    for name, value in vars(interface.Testbed).items():
        if inspect.isfunction(value) and (not name.startswith("_") or name in ("__enter__", "__exit__")):
            out[name] = value
    return out


def parameters(fn) -> list[tuple[str, object]]:
    """A callable's parameters by name and kind, without ``self``."""
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


def ssh_file(tmp_path) -> testbedfile.TestbedFile:
    return testbedfile.load(write(tmp_path, two_hosts()))


def test_the_protocol_names_attributes_and_methods_each_with_its_meaning():
    m = members()
    assert {"prefix", "ns_dut", "router_cpu", "procs"} <= m.keys()
    assert {"spawn", "sink_count", "tx_counters", "__enter__", "__exit__"} <= m.keys()
    for name, fn in m.items():
        if fn is not None:
            assert (fn.__doc__ or "").strip(), f"{name} says nothing of what it means"


@pytest.mark.parametrize("cls", IMPLEMENTATIONS, ids=lambda c: c.__name__)
def test_each_testbed_has_every_member_of_the_protocol_with_its_parameters(cls):
    fields = {f.name for f in dataclasses.fields(cls)}
    for name, fn in members().items():
        assert hasattr(cls, name) or name in fields, f"{cls.__name__} lacks {name}"
        if fn is not None:
            assert parameters(getattr(cls, name)) == parameters(fn), f"{cls.__name__}.{name}"


@pytest.mark.parametrize("cls", (SshTestbed, RerouteNet), ids=lambda c: c.__name__)
def test_no_testbed_is_a_namespace_testbed_underneath(cls):
    assert not issubclass(cls, NamespaceTestbed)


def test_a_testbed_of_each_kind_is_a_testbed_before_it_comes_up(tmp_path):
    made = [NamespaceTestbed(generator="rlgen"), SshTestbed(file=ssh_file(tmp_path)), RerouteNet()]
    for tb in made:
        assert isinstance(tb, interface.Testbed), type(tb).__name__
        assert interface.PREFIX_RE.match(tb.prefix) and tb.procs == [] and tb.router_queue is None
        assert all(interface.NS_RE.match(ns) for ns in tb.namespaces)
    ssh = made[1]
    assert (ssh.generator, ssh.gen_cpu, ssh.router_cpu) == ("rlgen", 0, 1)
    assert (ssh.tg_if, ssh.dut_in, ssh.sink_if) == ("ens1f0", "ens1f0", "ens1f1")
    assert ssh.mac(ssh.ns_dut, "ens1f1") == MACS[2] and ssh.link_name("ens1f1") in ("d1", "s0")
    assert ssh.probe_ns == ssh.ns_dut  # the CPU-stop probe runs on the router's host
    net = made[2]
    assert net.probe_ns in net.namespaces and net.generator == "iperf3"
    with pytest.raises(RouterlabError, match="iperf3 counts its own traffic"):
        net.sink_count()


def test_the_protocol_names_nothing_its_callers_do_not_use():
    """Its callers: measuring/, the traffic and the XDP generator they drive, the engines
    and benchmarks they run."""
    callers = [*(LIB / "measuring").glob("*.py"), LIB / "testbed" / "traffic.py", LIB / "testbed" / "xdpgen.py",
               *(LIB / "engines").glob("*.py"), *(LIB / "benchmarks").glob("*.py")]
    text = "\n".join(p.read_text() for p in callers)
    unused = [name for name in members() if not name.startswith("__") and not re.search(rf"\.{name}\b", text)]
    assert unused == []


# -- what the testbeds share -------------------------------------------------------------------

def test_the_checks_name_the_parameter_refused():
    lifetime.check_prefix(lifetime.new_prefix())
    for call, name in ((lambda: lifetime.check_prefix("xx123456"), "prefix"), (lambda: lifetime.check_mtu(100), "mtu"),
                       (lambda: lifetime.check_cpus(gen_cpu=0, router_cpu=os.cpu_count()), "router_cpu")):
        with pytest.raises(ParameterError) as e:
            call()
        assert e.value.name == name


@dataclass
class Toy(lifetime.Lifetime):
    """A testbed of nothing: what :class:`lifetime.Lifetime` gives, seen from outside."""

    direct: bool = False
    prefix: str = field(default_factory=lifetime.new_prefix)
    fail_in: str = ""
    calls: list = field(default_factory=list)

    def _may_start(self):
        self.calls.append("may_start")

    def _place(self):
        self.calls.append("place")
        if self.fail_in == "place":
            raise RouterlabError("cannot place")

    def up(self):
        self._up = True
        self.calls.append("up")
        self._write_state()

    def down(self):
        self.calls.append("down")
        self._up = False


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(lifetime, "STATE_DIR", tmp_path)
    return tmp_path


def test_the_state_file_names_the_run_its_namespaces_and_its_live_processes(state_dir):
    tb = Toy()
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        tb.procs += [done, running]
        tb._write_state()
        st = json.loads((state_dir / f"{tb.prefix}.json").read_text())
    finally:
        running.kill()
        running.wait()
    assert st["prefix"] == tb.prefix and st["pid"] == os.getpid()
    assert st["namespaces"] == [f"{tb.prefix}-tg", f"{tb.prefix}-sink", f"{tb.prefix}-dut"]
    assert st["procs"] == [running.pid]
    wired = Toy(direct=True)  # no router: no router's namespace
    assert wired.namespaces == [f"{wired.prefix}-tg", f"{wired.prefix}-sink"]


def test_sigterm_in_the_block_takes_the_testbed_down_and_gives_the_handler_back(state_dir):
    before = signal.getsignal(signal.SIGTERM)
    tb = Toy()
    with pytest.raises(KeyboardInterrupt):
        with tb:
            assert signal.getsignal(signal.SIGTERM) is not before
            os.kill(os.getpid(), signal.SIGTERM)
    assert tb.calls == ["may_start", "place", "up", "down"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_testbed_that_fails_to_come_up_goes_down_and_gives_the_handlers_back(state_dir):
    before = signal.getsignal(signal.SIGINT)
    tb = Toy(fail_in="place")
    with pytest.raises(RouterlabError, match="cannot place"):
        with tb:
            pass
    assert tb.calls == ["may_start", "place", "down"]
    assert signal.getsignal(signal.SIGINT) is before
