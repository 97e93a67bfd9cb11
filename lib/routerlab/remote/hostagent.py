"""routerlab on a host of a testbed beyond one machine: ``python -m routerlab.remote.hostagent``.

The measuring machine (:mod:`routerlab.remote.sshtestbed`) starts one agent per host over SSH and
sends it requests, one JSON object a line on its standard input (``{"op": ..., "args":
{...}}``); each answer is one line on its standard output (``{"ok": value}`` or
``{"error": message, "kind": class}``). The agent plays the roles the testbed file gives its
host (generator, router, sink) through a :class:`HostTestbed`: the roles' network
namespace is the host's own, attached under the testbed's names (``ip netns attach``), so
the engines, the sink's counter and the CPU probe run there as they run on the namespace
testbed, on the named interfaces. What that changes on the host is journalled and undone
(:mod:`routerlab.testbed.hostchanges`).

When its standard input ends (the measuring machine is done, was killed, or the
connection broke), or on SIGTERM or SIGHUP, the agent stops the engine and undoes its
host's set-up before it exits.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from routerlab import cache, processes
from routerlab.analysis import datasets
from routerlab.testbed import hostchanges
from routerlab.measuring import measurement
from routerlab.testbed import capabilities, shell
from routerlab.errors import RouterlabError
from routerlab.analysis.scenarios import Scenario
from routerlab.testbed.interface import SINK_NET, STATE_DIR, TG_NET
from routerlab.testbed.namespaces import NamespaceTestbed
from routerlab.testbed.shell import nsexec, sh
from routerlab.remote.testbedfile import LINK_NAMES, NAMESPACE_SUFFIX, ROLE_OF_SUFFIX
from routerlab.version import code_version



@dataclass
class HostTestbed(NamespaceTestbed):
    """This host's part of a testbed beyond one machine.

    ``roles`` maps each role played here to its CPU and interfaces (``{"router": {"cpu":
    1, "in": "ens1f0", "out": "ens1f1"}}``); ``macs`` maps ``"<role>.<which>"`` to the MAC
    of every interface of the testbed, those of other hosts too (the neighbours' entries,
    the engines' defines). With ``direct`` the sink is the router's input interface (the
    generator's ceiling)."""

    roles: dict = field(default_factory=dict)
    macs: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)
    journal: hostchanges.Journal | None = field(default=None, repr=False)

    def __post_init__(self):
        self.generator = "rlgen"
        cpus = {r: spec["cpu"] for r, spec in self.roles.items()}
        self.gen_cpu = cpus.get("generator", 0)
        self.router_cpu = cpus.get("router", cpus.get("sink", 0))
        self.sink_cpu = cpus.get("sink", self.router_cpu)
        ncpu = os.cpu_count() or 1
        for r, cpu in cpus.items():
            if not 0 <= cpu < ncpu:
                raise RouterlabError(f"role {r}: CPU {cpu} does not exist on {platform.node()} (it has {ncpu})")
        self.idle_held = "os (the host's own idle states)"

    # names: the testbed file's interfaces
    @property
    def tg_if(self):
        return self.names["generator.out"]

    @property
    def dut_in(self):
        return self.names["router.in"]

    @property
    def dut_out(self):
        return self.names["router.out"]

    @property
    def sink_if(self):
        return self.names["router.in" if self.direct else "sink.in"]

    @property
    def namespaces(self):
        return [f"{self.prefix}-{NAMESPACE_SUFFIX[r]}" for r in self.roles]

    def mac(self, ns: str, dev: str) -> str:
        role = ROLE_OF_SUFFIX[ns.rsplit("-", 1)[1]]
        if self.direct and role == "sink":
            return self.macs["router.in"]
        return next(self.macs[k] for k, v in self.names.items() if k.startswith(role + ".") and v == dev)

    @property
    def pin_name(self) -> str:
        # hosts that are namespaces of one machine share its BPF filesystem
        return f"{self.prefix}-{NAMESPACE_SUFFIX[next(iter(self.roles))]}"

    def own_device(self, dev: str) -> bool:
        return dev in {spec.get(w) for spec in self.roles.values() for w in ("in", "out")}

    def link_name(self, dev: str) -> str:
        return next((LINK_NAMES[k] for k, v in self.names.items() if v == dev), dev)

    def up(self):
        self._up = True
        self._write_state()
        for ns in self.namespaces:
            shell.delete_namespace(ns)  # a handle a run of the same prefix left
            sh("ip", "netns", "attach", ns, str(os.getpid()))
        self.journal = hostchanges.Journal(STATE_DIR / f"{self.prefix}-changes.json", self.namespaces).__enter__()
        here = {r: f"{self.prefix}-{NAMESPACE_SUFFIX[r]}" for r in self.roles}
        for r, ns in here.items():
            for which in ("in", "out"):
                dev = self.roles[r].get(which)
                if dev:
                    # the slash form: an interface name may hold dots (a VLAN's ens1f0.100)
                    nsexec(ns, "sysctl", "-qw", f"net/ipv6/conf/{dev}/disable_ipv6=1")
                    sh("ip", "-n", ns, "link", "set", "dev", dev, "up")
        if "generator" in here:
            ns = here["generator"]
            sh("ip", "-n", ns, "addr", "add", f"{TG_NET}.2/24", "dev", self.tg_if)
            far = "router.in"
            sh("ip", "-n", ns, "neigh", "replace", f"{TG_NET}.1", "lladdr", self.macs[far], "dev", self.tg_if,
               "nud", "permanent")
        if "router" in here:
            ns = here["router"]
            sh("ip", "-n", ns, "addr", "add", f"{TG_NET}.1/24", "dev", self.dut_in)
            sh("ip", "-n", ns, "addr", "add", f"{SINK_NET}.1/24", "dev", self.dut_out)
            sh("ip", "-n", ns, "neigh", "replace", f"{SINK_NET}.2", "lladdr", self.macs["sink.in"], "dev",
               self.dut_out, "nud", "permanent")
            sh("ip", "-n", ns, "neigh", "replace", f"{TG_NET}.2", "lladdr", self.macs["generator.out"], "dev",
               self.dut_in, "nud", "permanent")
            # the router's receive work on its CPU, as on the namespace testbed with rlgen
            self.set_rps(ns, self.dut_in, self.router_cpu)
        if "sink" in here:
            ns = here["sink"]
            if self.direct:
                sh("ip", "-n", ns, "addr", "add", f"{TG_NET}.1/24", "dev", self.sink_if)
            else:
                sh("ip", "-n", ns, "addr", "add", f"{SINK_NET}.2/24", "dev", self.sink_if)
            self.count_at_sink()
            if self.sink_cpu is not None and "router" not in here:
                self.set_rps(ns, self.sink_if, self.sink_cpu)

    @staticmethod
    def set_rps(ns: str, dev: str, cpu: int | None):
        """RPS on every receive queue of ``dev``: a NIC's RSS puts a flow on any of them."""
        mask = 0 if cpu is None else 1 << cpu
        for q in sorted(Path(f"/sys/class/net/{dev}/queues").glob("rx-*")):
            nsexec(ns, "sh", "-c", f"echo {mask:x} > /sys/class/net/{dev}/queues/{q.name}/rps_cpus")

    def down(self) -> list[str]:
        """Stop this host's processes, undo its set-up, detach the handles; what could not
        be undone, one line each."""
        failed: list[str] = []
        if not self._up:
            return failed
        # what the measuring machine ran here through routerlab.remote.hostrun, should its
        # sessions outlive it (a connection cut off)
        for note in (STATE_DIR / f"{self.prefix}-procs").glob("*.proc"):
            pid = note.read_text().strip()
            if pid.isdigit():
                processes.kill_group(int(pid))
        for p in self.procs:
            processes.kill_group(p.pid)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except Exception:
                pass
        self.procs.clear()
        if self.journal is not None:
            self.journal.__exit__(None, None, None)
            failed = self.journal.restore()
        for ns in self.namespaces:
            shell.delete_namespace(ns)
        # where routerlab.remote.hostrun noted the processes the measuring machine ran here
        shutil.rmtree(STATE_DIR / f"{self.prefix}-procs", ignore_errors=True)
        self.state_file.unlink(missing_ok=True)
        self._up = False
        return failed


class Agent:
    """The requests an agent answers (``op_<name>``)."""

    def __init__(self):
        self.tb: HostTestbed | None = None
        self.engine = None
        self.drops = None

    def op_hello(self, interfaces: dict) -> dict:
        """This host's facts (node, kernel, CPU, NIC drivers), each of ``interfaces``
        (``"<role>.<which>": [name, mac]``) checked to be here with that MAC."""
        capabilities.require_root()
        drivers = {}
        for key, (name, mac) in interfaces.items():
            try:
                link = json.loads(sh("ip", "-j", "link", "show", "dev", name))[0]
            except (RouterlabError, json.JSONDecodeError, IndexError):
                raise RouterlabError(f"interface {key} ({name}) is not on this host") from None
            if link.get("address", "").lower() != mac:
                raise RouterlabError(f"interface {key} ({name}) has MAC {link.get('address')}, "
                                     f"the testbed file says {mac}")
            info = sh("ethtool", "-i", name, check=False)
            drv = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("driver:")), "unknown")
            drivers[key] = f"{name} ({drv})"
        h = datasets.host()
        return {**h, "drivers": drivers, "state_dir": str(STATE_DIR), "ncpu": os.cpu_count(),
                "python": sys.executable, "routerlab": code_version()}

    def op_up(self, prefix: str, roles: dict, macs: dict, names: dict, direct: bool = False) -> dict:
        self.tb = HostTestbed(prefix=prefix, roles=roles, macs=macs, names=names, direct=direct)
        try:
            self.tb.up()
        except BaseException:
            self.op_down()
            raise
        mtus = [json.loads(sh("ip", "-j", "link", "show", "dev", d))[0]["mtu"]
                for spec in roles.values() for d in (spec.get("in"), spec.get("out")) if d]
        self.tb.mtu = min(mtus)
        return {"mtu": self.tb.mtu, "changes": self.tb.journal.listed if self.tb.journal else []}

    def op_program(self, name: str) -> str:
        return str(cache.compiled(name))

    def op_link_stats(self, ns: str, dev: str) -> dict:
        return shell.link_stats(ns, dev)

    def op_sink_count(self) -> int:
        return self.tb.sink_count()

    def op_cpu_times(self) -> dict:
        return shell.cpu_times()

    def _engine(self, name: str, scenario: dict, config: str | None, control: str | None, commands: dict | None,
                settings: dict | None, folder: Path):
        """The engine and scenario the measuring machine resolved, made and checked here
        (a configuration of one's own written into ``folder``)."""
        from routerlab.engines import registry
        from routerlab.engines.external import Commands

        path = None
        if config is not None:
            path = folder / "own.click"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(config)
        made = type(registry.get(name))(**settings) if settings else name
        return measurement.resolve(made, Scenario(**scenario), config=path, control=control,
                                 router=Commands(**commands) if commands else None)

    def op_engine_check(self, **spec):
        """Whether the engine can run here for the scenario: its own check's error, else None."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="routerlab-check-") as tmp:
            self._engine(**spec, folder=Path(tmp))

    def op_engine_up(self, **spec) -> dict:
        eng, sc = self._engine(**spec, folder=STATE_DIR / f"{self.tb.prefix}-config")
        self.engine = eng
        facts = eng.bring_up(self.tb, sc)
        return {"facts": facts, "version": eng.version(), "changes": self.tb.journal.listed}

    def op_drops_attach(self):
        """Count this host's drops (:class:`routerlab.measuring.drops.DropCounter`: the kernel's drop
        tracepoint by namespace, the test links', qdiscs' and softnet's counters); where
        generator and sink share the host, the tracepoint cannot tell them apart and
        counts both as the sink's."""
        from routerlab.measuring import drops

        self.drops = drops.DropCounter(self.tb, None).__enter__()

    def op_drops_read(self) -> list:
        r = self.drops.read()
        if self.engine is not None:
            r.update({("dut", "engine", k): v for k, v in self.engine.drop_counters(self.tb).items()})
        return [[*k, v] for k, v in r.items()]

    def op_drops_detach(self):
        d, self.drops = getattr(self, "drops", None), None
        if d is not None:
            d.__exit__(None, None, None)

    def op_engine(self, method: str):
        if method not in ("forwarded", "drop_counters", "costs"):
            raise RouterlabError(f"no engine method {method!r}")
        return getattr(self.engine, method)(self.tb)

    def op_engine_stop(self):
        if self.engine is not None:
            eng, self.engine = self.engine, None
            eng.stop(self.tb)

    def op_down(self) -> list[str]:
        failed = []
        try:
            self.op_drops_detach()
            self.op_engine_stop()
        except Exception as e:
            failed.append(f"stopping the engine: {e}")
        if self.tb is not None:
            failed += self.tb.down()
            self.tb = None
        return failed


#: The measuring machine sends a line at least this often, seconds (:data:`HEARTBEAT_S`
#: in routerlab.remote.sshtestbed); an agent idle this long without one takes it as gone.
SILENCE_S = 60.0


def _watchdog(state: dict):
    """End the agent (SIGTERM to itself: its set-up undone) when the measuring machine
    has said nothing for :data:`SILENCE_S` while no request runs: a connection cut off
    without an end, which SSH may not notice for hours."""
    import time

    while True:
        time.sleep(1.0)
        if not state["busy"] and time.monotonic() - state["heard"] > SILENCE_S:
            print(f"routerlab host agent: nothing from the measuring machine for {SILENCE_S:g} s: ending",
                  file=sys.stderr)
            os.kill(os.getpid(), signal.SIGTERM)
            return


def main() -> int:
    import threading
    import time

    # answers go to the real standard output; anything else printed goes to stderr
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    agent = Agent()

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, stop)
    state = {"busy": False, "heard": time.monotonic()}
    threading.Thread(target=_watchdog, args=(state,), daemon=True).start()
    try:
        for line in sys.stdin:
            state["heard"] = time.monotonic()
            req = {}
            try:
                req = json.loads(line)
                if req.get("op") == "ping":  # the measuring machine is there; no answer
                    continue
                state["busy"] = True
                result = getattr(agent, "op_" + req["op"])(**req.get("args", {}))
                answer = {"ok": result}
            except (RouterlabError, OSError, ValueError) as e:
                answer = {"error": str(e), "kind": type(e).__name__}
            except Exception as e:
                traceback.print_exc()
                answer = {"error": f"{type(e).__name__}: {e}", "kind": "internal"}
            state["busy"], state["heard"] = False, time.monotonic()
            replies.write(json.dumps({"id": req.get("id"), **answer}) + "\n")
    except KeyboardInterrupt:
        pass
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        for problem in agent.op_down():
            print(f"routerlab host agent: not restored: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
