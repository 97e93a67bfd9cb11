"""A student's Click configuration run: whether Click takes it (``click -q``, with
routerlab's stand-ins for the devices, each problem explained with a hint), and the router
it makes, from memory (the devices Unix datagram sockets) or on the testbed (the engine
``click`` in the router's namespace). :mod:`routerlab.course.clickexercises` checks each
exercise against it."""

from __future__ import annotations

import functools
import re
import select
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from routerlab import processes
from routerlab.engines import registry
from routerlab.analysis import scenarios
from routerlab.course.checks import ARP, IPV4, parse, through
from routerlab.course.checks import hint as checks_hint
from routerlab.engines.click import read_handler, wrap_config
from routerlab.errors import EngineNotFound, NotStarted, ParameterError, RouterlabError
from routerlab.testbed.namespaces import NamespaceTestbed
from routerlab.testbed.shell import nsexec


#: The device under test's ports as the checks name them: 0 towards the generator, 1 towards the sink.
PORTS = {0: "$IN_DEV", 1: "$OUT_DEV"}
#: Device names from memory (the testbed's are its own, e.g. rl3f2a1cd0).
MEMORY_DEVICES = ("mem-in", "mem-out")
#: Element classes the stand-ins for the devices are made of.
STAND_IN_CLASSES = {"Message", "Idle", "PushNull", "PullNull", "Discard", "Socket", "ControlSocket"}
#: Seconds a router from memory may stay silent before what it sent counts as all.
MEMORY_QUIET_S = 0.1

START = "Click runs it: it parses, push meets pull through a Queue, every element exists, the devices are $IN_DEV and $OUT_DEV"

# FromDevice and ToDevice, replaced for the first look at a configuration (click -q): each
# names its device, and the push and pull ends are kept, so a missing Queue is still an error.
_STATIC_PRELUDE = (
    'elementclass FromDevice { __REST__ $args | Message("routerlab-device FromDevice $args"); '
    'Idle -> routerlab_push :: PushNull -> output } '
    'elementclass ToDevice { __REST__ $args | Message("routerlab-device ToDevice $args"); '
    'input -> routerlab_pull :: PullNull -> Discard }')

# ... and for a run from memory: a Unix datagram socket per device and direction
_MEMORY_PRELUDE = (
    'elementclass FromDevice {{ $dev, __REST__ $rest | Socket(UNIX_DGRAM, "{dir}/$dev.rx", CLIENT false) '
    '-> routerlab_push :: PushNull -> output }} '
    'elementclass ToDevice {{ $dev, __REST__ $rest | input -> routerlab_pull :: PullNull '
    '-> Socket(UNIX_DGRAM, "{dir}/$dev.tx", CLIENT true) }} '
    'routerlab_control :: ControlSocket(unix, "{dir}/control.sock");')


# -- Click itself ------------------------------------------------------------------------------

def click_binary() -> str:
    """The Click routerlab runs (``routerlab engines install click``, or ``$ROUTERLAB_CLICK``)."""
    return registry.get("click").binary()


@functools.lru_cache(maxsize=4)
def element_classes(binary: str) -> frozenset[str]:
    """The element classes of this Click build (its global ``classes`` handler)."""
    p = subprocess.run([binary, "-q", "-e", "", "-h", "classes"], capture_output=True, text=True, timeout=30)
    if p.returncode:
        raise EngineNotFound(f"click: {binary} does not run: {p.stderr.strip()[:300]}")
    return frozenset(p.stdout.split())


def element_doc(name: str) -> Path:
    """The manual page of element class ``name`` installed with this Click (user-level
    variant first, e.g. FromDevice.u); ``language`` is the Click language's, click(5)."""
    man = Path(click_binary()).resolve().parent.parent / "share" / "man"
    if name == "language":
        if (man / "man5" / "click.5").is_file():
            return man / "man5" / "click.5"
        raise ParameterError("element", f"no manual page click(5) in {man / 'man5'}")
    man7 = man / "man7"
    for stem in (f"{name}.u", name):
        path = man7 / f"{stem}.7click.gz"
        if path.is_file():
            return path
    classes = element_classes(click_binary())
    close = close_matches(name, classes)
    raise ParameterError("element", f"no manual page for {name!r} in {man7}"
                         + (f"; did you mean {', '.join(close)}?" if close else ""))


def close_matches(name: str, classes) -> list[str]:
    import difflib

    lower = {c.lower(): c for c in classes}
    return [lower[m] for m in difflib.get_close_matches(name.lower(), list(lower), n=3, cutoff=0.75)]


def defines(devices: tuple[str, str], data: dict | None = None) -> dict[str, str]:
    """The defines an exercise's configuration gets: the device under test's two devices,
    the testbed's MACs (the same on the testbed and from memory) and, where the exercise's
    ``check.yaml`` gives one (``data``), the MTU its router fragments to."""
    m = NamespaceTestbed.MACS
    return {"IN_DEV": devices[0], "OUT_DEV": devices[1], "IN_MAC": m["d0"], "OUT_MAC": m["d1"],
            "PREV_MAC": m["g0"], "NEXT_MAC": m["s0"], **exercise_defines(data)}


def exercise_defines(data: dict | None) -> dict[str, str]:
    """The defines an exercise's ``check.yaml`` (``data``) sets itself: the MTU its router
    fragments to, where it gives one (bytes)."""
    return {"MTU": str(data["mtu"])} if data and "mtu" in data else {}


# -- the first look: does Click take it? -----------------------------------------------------

def static_check(config: Path, devices: tuple[str, str]) -> tuple[list[str], dict[str, list[str]]]:
    """Run Click on ``config`` without running the router (``click -q``), its devices
    replaced by stand-ins.

    Returns
    -------
    problems : list of str
        Click's messages as Click reports them (file:line), each kind followed by a line
        ``hint: ...``; empty when Click takes the configuration and its devices are
        ``devices``.
    used : dict
        ``{"FromDevice": [device, ...], "ToDevice": [...]}`` as the configuration names them.
    """
    binary = click_binary()
    missing = STAND_IN_CLASSES - element_classes(binary)
    if missing:
        raise EngineNotFound(f"click: this build lacks {', '.join(sorted(missing))}, which routerlab's checks need")
    with tempfile.TemporaryDirectory(prefix="routerlab-click-") as tmp:
        wrapper = Path(tmp) / "check.click"
        wrapper.write_text(wrap_config(config, _STATIC_PRELUDE))
        p = subprocess.run([binary, "-q", str(wrapper), *[f"{k}={v}" for k, v in defines(devices).items()]],
                           capture_output=True, text=True, timeout=60)
    used: dict[str, list[str]] = {"FromDevice": [], "ToDevice": []}
    lines = []
    for line in p.stderr.splitlines():
        m = re.match(r"\s*routerlab-device (FromDevice|ToDevice) ?(.*)$", line)
        if m:  # the device is the first argument (or DEVNAME)
            used[m.group(1)].append(m.group(2).split(",")[0].strip().removeprefix("DEVNAME").strip())
        elif "routerlab-device" in line or ":: Message'" in line or line.startswith("Router could not be initialized"):
            continue
        else:
            lines.append(line)
    if p.returncode:
        return _explain(lines, config, binary) or [f"click exited with status {p.returncode}"], used
    problems = []
    text = config.read_text()
    for kind, names in used.items():
        for name in names:
            if name not in devices:
                where = _line_of(text, re.escape(name) if name else rf"{kind}\s*\(\s*\)")
                problems.append(f"{config}:{where}{kind}({name}): "
                                + (f"{name} is not a device of the testbed" if name else "which device?"))
                problems.append(f"hint: write {kind}($IN_DEV) (towards the generator) or {kind}($OUT_DEV) "
                                f"(towards the sink); routerlab sets them to the devices it runs the router "
                                f"on (here {devices[0]} and {devices[1]})")
    return problems, used


def _line_of(text: str, pattern: str) -> str:
    """"N: " for the first line of ``text`` where ``pattern`` (a regular expression) stands
    as a word, outside comments, or " " when none does (for a message)."""
    for i, line in enumerate(text.splitlines(), 1):
        if re.search(rf"(?<![\w$-])(?:{pattern})(?![\w-])", line.split("//")[0]):
            return f"{i}: "
    return " "


def _explain(lines: list[str], config: Path, binary: str) -> list[str]:
    """Click's messages with routerlab's stand-ins named as the elements they stand for,
    and a hint after each kind of mistake a student makes."""
    out, hints = [], []
    text = config.read_text()
    for line in lines:
        line = re.sub(r"'([^']*)/routerlab_push :: PushNull'", r"'\1 :: FromDevice'", line)
        line = re.sub(r"'([^']*)/routerlab_pull :: PullNull'", r"'\1 :: ToDevice'", line)
        m = re.match(r"(?:agnostic )?'([^']+) :: (\w+)'", line)
        if m:  # Click names no line for push and pull: the element's own line, where it is clear
            name, cls = m.groups()
            anonymous = re.fullmatch(rf"{cls}@\d+", name)
            where = _line_of(text, rf"{cls}\s*\(|{cls}(?=\s*(->|;|$))") if anonymous else \
                _line_of(text, rf"{re.escape(name)}\s*::")
            if anonymous and len(re.findall(rf"(?<![\w$-]){cls}(?![\w-])", text)) != 1:
                where = " "
            line = f"{config}:{where}{line}" if where.strip() else line
        if "check.click:" in line:  # a candidate signature of a stand-in: say what it takes instead
            hints.append("hint: FromDevice and ToDevice take the device first, e.g. FromDevice($IN_DEV, SNIFFER true)")
            continue
        out.append(line)
        if "in mixed context" in line:
            hints.append("hint: this element sits between a push output and a pull input: put a Queue on that "
                         "path")
        elif "push output" in line and "pull input" in line:
            hints.append("hint: a push output feeds a pull input: put a Queue between them (Queue takes pushes "
                         "and is pulled from)")
        elif "pull output" in line and "push input" in line:
            hints.append("hint: a pull output feeds a push input: something must pull first, e.g. Unqueue, or "
                         "connect it to a pull input such as ToDevice's")
        if re.search(r"one per output port|output \d+ unused", line):
            hints.append("hint: Click gives an element as many outputs as are connected, and wants each used: "
                         "connect every output (name[0], name[1], ...), to Discard where a later TODO will")
        m = re.search(r"undeclared element '([^']+)'", line) or re.search(r"unknown element class '([^']+)'", line)
        if m:
            name = m.group(1)
            close = close_matches(name, element_classes(binary))
            if name[:1].isupper():
                hints.append(f"hint: {name} is not an element class of this Click build"
                             + (f"; did you mean {' or '.join(close)}?" if close else "")
                             + " (routerlab click doc ELEMENT shows one's manual page)")
            else:
                hints.append(f"hint: no element named {name} was declared: declare it once with "
                             f"'{name} :: Class(...)' before connecting to it by name")
    seen = set()
    return out + [h for h in hints if not (h in seen or seen.add(h))]


# -- the router, running -----------------------------------------------------------------------

class MemoryRouter:
    """A configuration run by Click from memory: FromDevice and ToDevice are Unix datagram
    sockets that routerlab writes frames into and reads them from. No root, no link."""

    devices = MEMORY_DEVICES

    def __init__(self, config: Path, data: dict | None = None):
        self.config, self.data = config, data

    def __enter__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="routerlab-click-"))
        self._tx = {}
        self._proc = None
        try:
            for port, dev in enumerate(self.devices):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                s.bind(str(self.dir / f"{dev}.tx"))
                s.setblocking(False)
                self._tx[port] = s
            wrapper = self.dir / "check.click"
            wrapper.write_text(wrap_config(self.config, _MEMORY_PRELUDE.format(dir=self.dir)))
            log = self.dir / "click.log"
            with open(log, "w") as fh:
                self._proc = subprocess.Popen(
                    [click_binary(), str(wrapper), *[f"{k}={v}" for k, v in defines(self.devices, self.data).items()]],
                    stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.monotonic() + 15
            while True:
                if self._proc.poll() is not None:  # the configuration stopped Click: the student's
                    raise NotStarted(f"click exited ({self._proc.returncode}): {log.read_text().strip()[-800:]}")
                try:
                    self.handler("version")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise NotStarted("click did not become ready within 15 s") from None
                    time.sleep(0.01)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self._proc is not None:
            processes.stop(self._proc, 5)
        for s in self._tx.values():
            s.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def handler(self, name: str) -> str:
        return read_handler(str(self.dir / "control.sock"), name)

    def send(self, frames: list[bytes], port: int) -> dict[int, list[bytes]]:
        """``frames`` into ``port``; the IPv4 and ARP frames the router sent on each port meanwhile."""
        rx = str(self.dir / f"{self.devices[port]}.rx")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            for f in frames:
                try:
                    s.sendto(f, rx)
                except (FileNotFoundError, ConnectionRefusedError):
                    break  # no FromDevice reads this device: the frames go nowhere
        got: dict[int, list[bytes]] = {0: [], 1: []}
        last = time.monotonic()
        while time.monotonic() - last < MEMORY_QUIET_S:
            ready, _, _ = select.select(list(self._tx.values()), [], [], MEMORY_QUIET_S / 4)
            for p, sock in self._tx.items():
                if sock in ready:
                    f = sock.recv(65535)
                    last = time.monotonic()
                    if f[12:14] in (IPV4.to_bytes(2, "big"), ARP.to_bytes(2, "big")):
                        got[p].append(f)
        return got


class TestbedRouter:
    """A configuration run on a fresh testbed by the engine ``click`` (as ``routerlab
    measure --config`` runs it); frames come from the generator's or the sink's namespace."""

    def __init__(self, config: Path, tb: NamespaceTestbed, data: dict | None = None):
        self.config, self.tb = config, tb
        self.engine = registry.get("click")
        self.engine.use_config(config, exercise_defines(data))
        self.devices = (tb.dut_in, tb.dut_out)

    def __enter__(self):
        self.tb.__enter__()
        try:
            # the generator's kernel must not answer what the router sends it (a NAT's reply
            # would draw an ICMP port unreachable); the capture sees frames before this drop
            nsexec(self.tb.ns_tg, "nft", "-f", "-", input=(
                "table netdev rlquiet {\n"
                f"  chain in {{ type filter hook ingress device \"{self.tb.tg_if}\" priority 0; drop; }}\n}}\n"))
            self.engine.start(self.tb, scenarios.load("single-flow"))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.engine.stop(self.tb)
        finally:
            self.tb.__exit__(*exc)
        return False

    def handler(self, name: str) -> str:
        return self.engine.handler(name)

    def send(self, frames: list[bytes], port: int) -> dict[int, list[bytes]]:
        return through(self.tb, frames, port, ethertypes=(IPV4, ARP))


class Run:
    """A router under check: send frames into a port and see what leaves where (scapy
    packets), read handlers, and say in one line what happened."""

    def __init__(self, router, used: dict[str, list[str]]):
        self.router, self.used = router, used
        self.devices = router.devices

    def send(self, frames: list[bytes], port: int = 0) -> dict[int, list]:
        return {p: [parse(f) for f in fs] for p, fs in self.router.send(frames, port).items()}

    def handler(self, name: str) -> tuple[str | None, str]:
        """(value, "") of handler ``name``, or (None, why it could not be read)."""
        try:
            return self.router.handler(name).strip(), ""
        except RouterlabError as e:  # the control socket's answer, e.g. "510 No element named 'x'"
            m = re.search(r"\b\d{3} (.*)$", str(e))
            return None, m.group(1) if m else str(e)
        except OSError as e:
            return None, f"the router does not answer ({e})"

    def hint(self, sent: bytes, port: int, got: dict[int, list], expected: str) -> str:
        """"sent ... into $X; got ...; expected ..." for a failure (:func:`routerlab.course.checks.hint`),
        saying when no FromDevice reads the port it went into."""
        note = f" (no FromDevice reads {PORTS[port]})" if self.devices[port] not in self.used["FromDevice"] else ""
        return checks_hint(sent, port, got, expected, PORTS, note)
