"""The testbed beyond one machine: generator, router and sink on hosts reached over SSH.

An implementation of the testbed's interface (:class:`routerlab.testbed.interface.Testbed`)
beside the namespace testbed (:class:`routerlab.testbed.namespaces.NamespaceTestbed`): a sweep, a search, the generator's ceiling and the trial validation run on it
unchanged. A testbed file (:mod:`routerlab.remote.testbedfile`) names the hosts, their roles and
their interfaces; :func:`using` gives the testbed settings of a measurement on it::

    with sshtestbed.using("hosts.yaml") as settings:
        measurement.measure(measurement.Request("linux", "single-flow", "runs/linux", loads="50000,100000",
                                                settings=settings))

How it works. Each host runs routerlab's agent (:mod:`routerlab.remote.hostagent`) over one
shared SSH connection (:mod:`routerlab.remote.ssh`): it attaches the host's own network namespace
under the testbed's names, sets up the roles it plays on the named interfaces (addresses,
static neighbours, the sink's counting drop, the router's receive work steered to its CPU
by RPS), journals every change and undoes it when it ends. The engine is started,
configured, read and stopped by the router host's agent, with that host's engines
(installed there by ``routerlab engines install``). The generator (rlgen) runs on the
generator's host and the CPU-stop probe on the router's, each under
:mod:`routerlab.remote.hostrun`, so that it ends with its connection. The counters (the
generator's link, the sink's count, the router host's CPU times) are read through the
agents.

What differs from the namespace testbed: the generator is rlgen (the XDP generator's
live frames are a veth's); the generator's ceiling is measured into the router host's input
interface, which counts and drops at ingress; the hosts' housekeeping threads and idle
states are left as they are (the environment record says so); the drop tracepoint is
read on each host by its agent; where generator and sink share a host, it cannot tell
their drops apart (both count as the sink's).

Nothing is left behind: the agents undo their hosts' set-up when their connection ends,
however the measuring process ends; ``routerlab clean --testbed hosts.yaml`` undoes what a
killed agent left, on every host (:func:`clean`).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import select
import shutil
import subprocess
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from routerlab.measuring import drops
from routerlab import errors, processes
from routerlab.remote import testbedfile
from routerlab.errors import ParameterError, RouterlabError, SshError
from routerlab.remote.ssh import Connection
from routerlab.testbed.interface import STATE_DIR
from routerlab.testbed.lifetime import Lifetime, check_prefix, new_prefix
from routerlab.testbed.settings import Settings
from routerlab.remote.testbedfile import LINK_NAMES, ROLE_OF_SUFFIX
from routerlab.version import code_version

#: How long an agent may take to answer one request, seconds (an engine's start loads its
#: routes: the largest table takes minutes).
ANSWER_TIMEOUT_S = 900


#: How often an agent is told the measuring machine is there, seconds (it ends itself after
#: :data:`routerlab.remote.hostagent.SILENCE_S` without a word).
HEARTBEAT_S = 15.0


#: What a host's python says of its routerlab when the agent could not start there: its
#: version, and whether it has the layout of folders (``routerlab.remote``) this one runs.
LAYOUT_PROBE = ("import importlib.util, routerlab; "
                "print(routerlab.__version__, importlib.util.find_spec('routerlab.remote') is not None)")


class Agent:
    """One host's agent: the SSH process that runs :mod:`routerlab.remote.hostagent` there, sent
    a heartbeat every :data:`HEARTBEAT_S` while it runs."""

    def __init__(self, conn: Connection):
        import threading

        self.conn = conn
        self.proc = conn.popen([conn.host.python, "-m", "routerlab.remote.hostagent"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
        self._lock = threading.Lock()
        self._buffer = b""
        self._stopped = threading.Event()
        threading.Thread(target=self._heartbeat, daemon=True).start()

    def _send(self, line: str):
        with self._lock:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()

    def _heartbeat(self):
        while not self._stopped.wait(HEARTBEAT_S):
            try:
                self._send(json.dumps({"op": "ping"}))
            except (OSError, ValueError):
                return

    def _line(self, deadline: float) -> bytes | None:
        """The agent's next line (b"" when it ended), read from the pipe itself so that no
        line waits unseen in a buffer; None at the deadline."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return b""
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line + b"\n"

    def call(self, op: str, timeout: float = ANSWER_TIMEOUT_S, **args):
        """The agent's answer to ``op`` with ``args``; its error raised as the kind of
        error it was, named by host. An answer to an earlier request that was interrupted
        (Ctrl-C while waiting) is passed over: each answer names its request."""
        name = self.conn.host.name
        self._seq = getattr(self, "_seq", 0) + 1
        try:
            self._send(json.dumps({"id": self._seq, "op": op, "args": args}))
        except (OSError, ValueError):
            raise SshError(f"host {name}: routerlab's agent is gone ({self._ended()})") from None
        deadline = time.monotonic() + timeout
        while True:
            line = self._line(deadline)
            if line is None:
                raise SshError(f"host {name}: routerlab's agent gave no answer to {op} within {timeout:g} s")
            if not line:
                raise SshError(f"host {name}: routerlab's agent ended during {op} ({self._ended()})")
            try:
                answer = json.loads(line)
            except ValueError:  # not the agent's (a login script's output): passed over
                continue
            if isinstance(answer, dict) and answer.get("id") == self._seq:
                break
        if "error" in answer:
            # the kind of failure the host had, so that callers tell a missing engine apart
            raise errors.rebuilt_error({"kind": answer.get("kind", ""), "message": answer["error"]},
                                          source=f"host {name}")
        return answer["ok"]

    def _ended(self) -> str:
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "no exit status"
        if rc == 255:
            return "the SSH connection failed"
        if rc == 1 or rc == 127:
            return self._why_not_started(rc)
        return f"exit {rc}"

    def _why_not_started(self, rc: int) -> str:
        """Why the agent could not start on its host, asked of the host's python once: no
        routerlab there, or one of the layout before the layers were folders (it has no
        ``routerlab.remote``), which is named with its version."""
        python = self.conn.host.python
        try:
            said = self.conn.run([python, "-c", LAYOUT_PROBE], timeout=30).split()
        except SshError:
            said = []
        if len(said) == 2 and said[1] == "False":
            return (f"exit {rc}: the host's routerlab ({said[0]}, for {python}) is of an older layout, without "
                    "routerlab.remote: install this machine's routerlab there")
        if len(said) == 2:
            return f"exit {rc}"
        return f"exit {rc}: is routerlab installed for {python} there? (the host's 'python' in the testbed file)"

    def close(self, timeout: float = 60) -> list[str]:
        """Ask the agent to undo its host's set-up and end; what it could not undo."""
        failed = []
        self._stopped.set()
        if self.proc.poll() is None:
            try:
                failed = self.call("down", timeout=timeout)
            except RouterlabError as e:
                failed = [str(e)]
            with self._lock:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
            processes.reap(self.proc, timeout)
        return failed


@dataclass
class SshTestbed(Lifetime):
    """The testbed of a testbed file (:mod:`routerlab.remote.testbedfile`): the interface of
    every testbed (:class:`routerlab.testbed.interface.Testbed`), over SSH. The CPUs are
    those the file gives each role; ``direct`` measures the generator's ceiling into the
    router host's input."""

    file: testbedfile.TestbedFile | None = None
    direct: bool = False
    #: The smallest MTU of the hosts' test links once up, bytes.
    mtu: int = 1500
    prefix: str = field(default_factory=new_prefix)
    #: Set by the engine's start on the router's host (:meth:`RemoteEngine.bring_up`).
    router_queue: int | None = None
    #: The engine runs on the router's host: none of its processes is this machine's.
    router_pids: list[int] = field(default_factory=list, init=False)
    gen_cpu: int = field(default=0, init=False)
    router_cpu: int = field(default=0, init=False)
    #: The generator is rlgen: the XDP generator's live frames are a veth's.
    generator: str = field(default="rlgen", init=False)
    agents: dict = field(default_factory=dict, repr=False)
    conns: dict = field(default_factory=dict, repr=False)
    facts: dict = field(default_factory=dict, repr=False)
    #: What the hosts' set-up changed (host -> one line a change), undone when down.
    changes: dict = field(default_factory=dict, repr=False)
    _programs: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.file is None:
            raise RouterlabError("an SSH testbed needs its testbed file")
        check_prefix(self.prefix)
        roles = self.file.roles
        self.gen_cpu, self.router_cpu = roles["generator"].cpu, roles["router"].cpu
        self.idle_held = "os (the hosts' own idle states: not placed over SSH)"

    # names -----------------------------------------------------------------------
    def _iface(self, key: str) -> str:
        role, which = key.split(".")
        return self.file.interface(role, which).name

    @property
    def tg_if(self):
        return self._iface("generator.out")

    @property
    def dut_in(self):
        return self._iface("router.in")

    @property
    def dut_out(self):
        return self._iface("router.out")

    @property
    def sink_if(self):
        return self._iface("router.in" if self.direct else "sink.in")

    def _role_host(self, role: str) -> str:
        if self.direct and role == "sink":
            role = "router"
        return self.file.roles[role].host

    def host_of_ns(self, ns: str) -> str:
        """The host (its name in the testbed file) that holds the namespace ``ns``."""
        return self._role_host(ROLE_OF_SUFFIX[ns.rsplit("-", 1)[1]])

    @property
    def probe_ns(self):
        return self.ns_sink if self.direct else self.ns_dut

    def mac(self, ns: str, dev: str) -> str:
        role = ROLE_OF_SUFFIX[ns.rsplit("-", 1)[1]]
        if self.direct and role == "sink":
            return self.file.interface("router", "in").mac
        ifaces = self.file.roles[role].interfaces
        return next(i.mac for i in ifaces.values() if i.name == dev)

    def link_name(self, dev: str) -> str:
        return next((short for k, short in LINK_NAMES.items() if self._iface(k) == dev), dev)

    # lifecycle ---------------------------------------------------------------------
    def _may_start(self):
        """Root is the hosts' to have (their agents check it); here the state folder must
        be writable."""
        try:
            STATE_DIR.mkdir(parents=True, exist_ok=True)
            if not os.access(STATE_DIR, os.W_OK):
                raise PermissionError(13, "not writable")
        except OSError as e:
            raise errors.NeedsRoot(f"{STATE_DIR} ({e.strerror}): run as root, or set ROUTERLAB_STATE_DIR to a "
                                   "folder of yours") from None

    def _place(self):
        """The hosts' kernel threads and idle states are left as they are."""

    def _plan(self) -> dict[str, dict]:
        """Per host: the roles it plays, with their CPUs and interface names."""
        plan: dict[str, dict] = {}
        for role in ("generator", "router", "sink"):
            if self.direct and role == "router":
                continue
            r = self.file.roles["router" if self.direct and role == "sink" else role]
            spec = {"cpu": r.cpu, **{w: i.name for w, i in r.interfaces.items()}}
            if self.direct and role == "sink":
                spec = {"cpu": r.cpu, "in": r.interfaces["in"].name}
            plan.setdefault(r.host, {})[role] = spec
        return plan

    def up(self):
        self._up = True
        self._write_state()
        control = STATE_DIR / f"{self.prefix}-ssh"
        plan = self._plan()
        macs = {f"{r}.{w}": i.mac for r, role in self.file.roles.items() for w, i in role.interfaces.items()}
        names = {f"{r}.{w}": i.name for r, role in self.file.roles.items() for w, i in role.interfaces.items()}
        for host in plan:
            conn = Connection(self.file.hosts[host], control, self.file.ssh_config)
            self.conns[host] = conn.open()
            self.procs.append(conn._master)
            self.agents[host] = Agent(conn)
            self.procs.append(self.agents[host].proc)
            self._write_state()
        here = code_version()
        for host, roles in plan.items():
            played = {"router" if self.direct and r == "sink" else r for r in roles}
            mine = {k: [names[k], macs[k]] for k in names if k.split(".")[0] in played}
            self.facts[host] = self.agents[host].call("hello", interfaces=mine)
            theirs = self.facts[host]["routerlab"]
            if theirs.split(" (")[0] != here.split(" (")[0] and not self.direct:
                logging.getLogger(__name__).warning(f"routerlab: host {host} runs routerlab {theirs}, this machine "
                                                    f"{here}: the record names both")
        mtus = []
        for host, roles in plan.items():
            got = self.agents[host].call("up", prefix=self.prefix, roles=roles, macs=macs, names=names,
                                         direct=self.direct)
            self.changes[host] = got["changes"]
            mtus.append(got["mtu"])
        self.mtu = min(mtus)

    def agent(self, role: str) -> Agent:
        return self.agents[self._role_host(role)]

    def down(self):
        if not self._up:
            return
        problems = []
        for host, a in list(self.agents.items()):
            problems += [f"host {host}: {p}" for p in a.close()]
        self.agents.clear()
        for c in self.conns.values():
            c.close()
        self.conns.clear()
        for p in self.procs:
            processes.reap(p)
        self.procs.clear()
        shutil.rmtree(STATE_DIR / f"{self.prefix}-ssh", ignore_errors=True)
        self.state_file.unlink(missing_ok=True)
        self._up = False
        for p in problems:
            logging.getLogger(__name__).warning(f"routerlab: {p} (run: routerlab clean --testbed {self.file.path})")

    @property
    def state_file(self) -> Path:
        # not the agents' file: the measuring machine may be one of the hosts
        return STATE_DIR / f"{self.prefix}-driver.json"

    def _state(self) -> dict:
        # `routerlab clean --testbed` finds this run's file by its testbed file
        return {**super()._state(), "testbed_file": str(self.file.path)}

    # what a measurement asks of the testbed ----------------------------------------
    def spawn(self, ns: str, *args: str, cpu: int | None = None, **kw) -> subprocess.Popen:
        host = self.host_of_ns(ns)
        argv = ["ip", "netns", "exec", ns] + (["taskset", "-c", str(cpu)] if cpu is not None else []) + list(args)
        state = str(Path(self.facts[host]["state_dir"]) / f"{self.prefix}-procs")
        p = self.conns[host].spawn(argv, state, **kw)
        self.procs.append(p)
        self._write_state()
        return p

    def program(self, name: str) -> str:
        role = "generator" if name == "rlgen" else ROLE_OF_SUFFIX[self.probe_ns.rsplit("-", 1)[1]]
        key = (name, self._role_host(role))
        if key not in self._programs:
            self._programs[key] = self.agent(role).call("program", name=name)
        return self._programs[key]

    def cpu_times(self):
        return self.agent("sink" if self.direct else "router").call("cpu_times")

    def sink_count(self) -> int:
        return self.agent("sink").call("sink_count")

    def tx_counters(self) -> dict:
        return self.agent("generator").call("link_stats", ns=self.ns_tg, dev=self.tg_if)

    def pin_receive(self):
        """Nothing to do: the router's receive is steered by RPS when its host comes up."""

    def router(self, engine):
        return RemoteEngine(engine)

    def drop_counter(self, engine) -> "RemoteDropCounter":
        return RemoteDropCounter(self, engine)

    def chain(self) -> str:
        f = self.file
        g, r, s = (f.roles[x] for x in ("generator", "router", "sink"))
        if self.direct:
            return (f"generator host {g.host} CPU {g.cpu} (rlgen, AF_PACKET, {self.tg_if}); straight into the "
                    f"router host {r.host}'s {self.dut_in}, counting and dropping at nft ingress")
        return (f"generator host {g.host} CPU {g.cpu} (rlgen, AF_PACKET, {self.tg_if}); router host {r.host} "
                f"CPU {r.cpu} ({self.dut_in} -> {self.dut_out}, its receive steered there by RPS); sink host "
                f"{s.host} CPU {s.cpu} ({self.sink_if}, drops at nft ingress); the hosts' kernel threads "
                "left where they were")

    def environment(self) -> dict:
        """The record's ``where``, ``kernel`` and ``cpu`` are the router host's; the
        setting names every host, its kernel, CPU and NIC drivers."""
        router = self.file.roles["router"].host
        h = self.facts[router]
        parts = []
        for host, facts in self.facts.items():
            roles = [r for r, spec in self.file.roles.items() if spec.host == host]
            parts.append(f"{'/'.join(roles)} on {host}: {facts['kernel']}, {facts['cpu']}, NIC "
                         f"{', '.join(facts['drivers'].values())}")
        setting = f"SSH testbed {self.file.path.name}, {self.file.layout} hosts; " + "; ".join(parts)
        versions = "; ".join(f"routerlab on {host}: {facts['routerlab']}" for host, facts in self.facts.items())
        return {"where": f"{h['node']} ({setting}; {h['virt']})", "kernel": h["kernel"], "cpu": h["cpu"],
                "versions": versions}


class RemoteEngine:
    """An engine as an SSH testbed drives it: started, read and stopped by the router
    host's agent, with that host's build of it. Everything else (its name, features,
    what counts as its design drops) is the local engine's."""

    def __init__(self, engine):
        self.local = engine
        self._version = None

    def __getattr__(self, name):
        return getattr(self.local, name)

    def _spec(self, sc) -> dict:
        eng = self.local
        config = getattr(eng, "own_config", None)
        commands = getattr(eng, "commands", None)
        return {"name": eng.name, "scenario": asdict(sc),
                "config": Path(config).read_text() if config else None,
                "control": getattr(eng, "control", None) if eng.name.startswith("bmv2") else None,
                "commands": asdict(commands) if commands is not None else None, "settings": eng.settings()}

    def bring_up(self, tb: SshTestbed, sc) -> dict:
        if self.local.one_machine:
            raise ParameterError("engine", f"{self.local.name} runs on the namespace testbed only: "
                                           f"{self.local.one_machine}")
        got = tb.agent("router").call("engine_up", **self._spec(sc))
        tb.changes[tb.file.roles["router"].host] = got["changes"]
        self._version = got["version"]
        tb.router_queue = got["facts"].get("router_queue_packets")
        return got["facts"]

    def version(self) -> str:
        return self._version or self.local.version()

    def forwarded(self, tb: SshTestbed):
        return tb.agent("router").call("engine", method="forwarded")

    def drop_counters(self, tb: SshTestbed) -> dict:
        return tb.agent("router").call("engine", method="drop_counters")

    def costs(self, tb: SshTestbed) -> dict:
        return tb.agent("router").call("engine", method="costs")

    def stop(self, tb: SshTestbed):
        if tb.agents:
            tb.agent("router").call("engine_stop")


class RemoteDropCounter(drops.DropCounter):
    """:class:`routerlab.measuring.drops.DropCounter` over every host of an SSH testbed: each host's
    agent counts its own drops, and a reading is theirs together (each host's per-CPU
    softnet counters named by host: ``dut:cpu1``). The engine's own drop counters come
    from the router's host."""

    def __enter__(self):
        try:
            for a in self.tb.agents.values():
                a.call("drops_attach")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for a in self.tb.agents.values():
            try:
                a.call("drops_detach", timeout=30)
            except RouterlabError:
                pass  # the agent's own end detaches it
        return False

    def read(self) -> drops.Reading:
        r: drops.Reading = {}
        for host, a in self.tb.agents.items():
            for place, source, reason, n in a.call("drops_read"):
                # a CPU's counters and the drops of packets without a device are the host's
                # as a whole, not a role's: named by host
                machine_wide = place.startswith("cpu") or place == "nodev"
                key = (f"{host}:{place}" if machine_wide else place, source, reason)
                r[key] = r.get(key, 0) + n
        return r


def _control_dir(what: str) -> Path:
    """A folder for the SSH control sockets of one command's connections (``what`` it
    does), named by this process so that :func:`clean` removes those of a killed one."""
    return STATE_DIR / f"ssh-{os.getpid()}-{what}-{secrets.token_hex(3)}"


@contextmanager
def connected(tf: testbedfile.TestbedFile, host: testbedfile.Host, what: str):
    """One command's shared connection to ``host`` (``what`` it is for), closed and its
    folder removed afterwards, whatever happens."""
    conn = Connection(host, _control_dir(what), tf.ssh_config)
    try:
        yield conn.open()
    finally:
        conn.close()
        shutil.rmtree(conn.control_dir, ignore_errors=True)


def _clean_control_dirs() -> list[str]:
    removed = []
    for d in STATE_DIR.glob("ssh-*-*"):
        pid = d.name.split("-")[1]
        if d.is_dir() and pid.isdigit() and not processes.alive(pid):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(f"here: folder {d}")
    return removed


class _Factory:
    """The SSH testbeds of one testbed file, and the engines checked on its router's host
    (through one agent, started at the first check and ended with the block)."""

    def __init__(self, tf: testbedfile.TestbedFile):
        self.tf = tf
        self._agent: Agent | None = None
        self._conn: Connection | None = None

    def __call__(self, **kw) -> SshTestbed:
        kw.pop("generator", None)
        return SshTestbed(file=self.tf, **kw)

    def check_engine(self, engine, scenario):
        if self._agent is None:
            host = self.tf.host_of("router")
            self._conn = Connection(host, _control_dir("check"), self.tf.ssh_config).open()
            self._agent = Agent(self._conn)
        try:
            self._agent.call("engine_check", **RemoteEngine(engine)._spec(scenario))
        except errors.EngineNotFound as e:
            raise errors.EngineNotFound(f"{e}; from here: routerlab engines install --testbed {self.tf.path} "
                                        f"{engine.name}") from None

    def close(self):
        if self._agent is not None:
            self._agent.close()
            self._conn.close()
            shutil.rmtree(self._conn.control_dir, ignore_errors=True)
            self._agent = self._conn = None


@contextmanager
def using(path, base: Settings | None = None):
    """The testbed settings (``base``'s, None: the environment's) with which measurements
    run on the testbed of the testbed file ``path`` (checked now) instead of the namespace
    testbed, sending with rlgen, engines checked on its router's host (its
    :class:`~routerlab.testbed.settings.Settings`' ``factory.tf`` is the file): for this
    ``with`` block, whose end closes the connection those checks opened."""
    base = base or Settings()
    if base.generator_asked and base.generator != "rlgen":
        raise ParameterError("generator", f"the SSH testbed sends with rlgen; {base.generator} sends into a veth of "
                                          "the same machine (leave --generator out)")
    factory = _Factory(testbedfile.load(path))
    try:
        yield replace(base, generator="rlgen", factory=factory)
    finally:
        factory.close()


def clean(path, all_runs: bool = False) -> list[str]:
    """Undo on every host of the testbed file ``path`` what killed runs left (their
    processes, their journalled set-up, their namespace handles: ``routerlab clean`` on
    each host), and end the SSH connections such runs left here. Returns what was
    removed, one line each, named by host."""
    tf = testbedfile.load(path)
    removed = _clean_control_dirs() if STATE_DIR.is_dir() else []
    if STATE_DIR.is_dir():
        for f in STATE_DIR.glob("rl*.json"):
            st = processes.read_state(f)
            if st is None or st.get("testbed_file") != str(tf.path) or processes.owner_alive(st):
                continue
            removed += [f"here: process {pid} (ssh)" for pid in processes.kill_left(st)]
            f.unlink(missing_ok=True)
            shutil.rmtree(STATE_DIR / f"{st['prefix']}-ssh", ignore_errors=True)
    unreached = []
    for host in tf.used_hosts():
        try:
            with connected(tf, host, "clean") as conn:
                out = conn.run([host.python, "-m", "routerlab.cli", "clean", *(["--all"] if all_runs else [])],
                               timeout=300)
        except SshError as e:  # the other hosts are cleaned all the same
            unreached.append(str(e))
            continue
        removed += [f"host {host.name}: {line.strip().removeprefix('removed ')}" for line in out.splitlines()
                    if line.strip() and not line.startswith("nothing")]
    if unreached:
        raise SshError("; ".join(unreached) + f" (removed elsewhere: {len(removed)}); on a host out of reach, run "
                       "`routerlab clean` on its console")
    return removed


def install_engines(path, names: list[str], *, bundle: str | None = None, sha256: str | None = None,
                    force: bool = False) -> None:
    """``routerlab engines install`` on the router's host of the testbed file ``path`` (the
    one host whose engines run), its output shown here: built from their pins there, or
    from ``bundle`` (a local file is copied there first, a URL is fetched by the host)."""
    tf = testbedfile.load(path)
    host = tf.host_of("router")
    with connected(tf, host, "install") as conn:
        argv = [host.python, "-m", "routerlab.cli", "engines", "install", *names] + (["--force"] if force else [])
        remote = None
        if bundle is not None:
            if Path(bundle).is_file():
                remote = conn.run(["mktemp", "--suffix", ".routerlab-bundle"]).strip()
                conn.put(Path(bundle), remote)
            argv += ["--from", remote or bundle] + (["--sha256", sha256] if sha256 else [])
        try:
            # under hostrun: an interrupted install ends on the host too (it removes what it left)
            p = conn.spawn(argv, None)
            try:
                rc = p.wait()
            except KeyboardInterrupt:
                p.terminate()
                p.wait(timeout=60)
                raise
        finally:
            if remote:
                conn.run(["rm", "-f", remote], check=False)
        if rc != 0:
            raise SshError(f"host {host.name}: routerlab engines install failed (exit {rc})")


def on_hosts(path, argv: list[str], timeout: float = 300) -> list[tuple[str, str, int, str]]:
    """``routerlab ARGV`` on every host of the testbed file ``path``: (host, its roles, the
    exit status, what it printed), host by host."""
    tf = testbedfile.load(path)
    out = []
    for host in tf.used_hosts():
        roles = ", ".join(r for r, spec in tf.roles.items() if spec.host == host.name)
        with connected(tf, host, "hosts") as conn:
            p = subprocess.run(conn.argv([host.python, "-m", "routerlab.cli", *argv]), capture_output=True,
                               text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        out.append((host.name, roles, p.returncode, p.stdout + p.stderr))
    return out
