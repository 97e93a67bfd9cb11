"""Testbed files: the hosts of a testbed beyond one machine, their roles and their links.

A testbed file (``hosts.yaml``) names the hosts routerlab reaches over SSH, the role each
plays (``generator``, ``router``: the device under test, ``sink``), the role's test
interfaces and the two links between the roles::

    hosts:
      loadgen: {ssh: "root@192.0.2.10"}
      dut:     {ssh: "root@192.0.2.11:2222", env: {ROUTERLAB_ENGINES_DIR: /srv/routerlab/engines}}
    roles:
      generator: {host: loadgen, cpu: 2, interfaces: {out: {name: ens1f0, mac: "3c:fd:fe:9e:00:10"}}}
      router:    {host: dut, cpu: 3, interfaces: {in:  {name: ens1f0, mac: "3c:fd:fe:9e:00:20"},
                                                  out: {name: ens1f1, mac: "3c:fd:fe:9e:00:21"}}}
      sink:      {host: loadgen, cpu: 3, interfaces: {in: {name: ens1f1, mac: "3c:fd:fe:9e:00:11"}}}
    links:
      - [generator.out, router.in]
      - [router.out, sink.in]

Two layouts: 2 hosts (generator and sink on one host, as FD.io CSIT's 2-node testbeds,
so the sink's clock is the generator's) and 3 hosts. The router is on a host of its own.

Everything is checked when the file is loaded (:func:`load`): an unknown key or role, a
missing one, a link whose ends are not generator.out to router.in and router.out to
sink.in, an interface named twice on one host. Each refusal is one line naming the file
and line, the host or role, and the key (:class:`~routerlab.errors.DataFormatError`); the
file's shape (:data:`SHAPE`) is checked by :mod:`routerlab.yamlfile`. That each
interface is there on its host with that MAC is checked when the testbed comes up
(:mod:`routerlab.remote.sshtestbed`), since only the host can say.

The addresses on the test links are routerlab's own plan, the same as on the namespace
testbed (:data:`routerlab.testbed.interface.TG_NET`, :data:`~routerlab.testbed.interface.SINK_NET`, the
destinations in :data:`~routerlab.testbed.interface.DEST_NET`), so that every engine and scenario
runs unchanged: they are added to the named interfaces for a run and removed after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from routerlab import yamlfile
from routerlab.errors import DataFormatError

ROLES = ("generator", "router", "sink")
#: Each role's interfaces, by the name the file gives them.
ROLE_INTERFACES = {"generator": ("out",), "router": ("in", "out"), "sink": ("in",)}
#: The two links a testbed has, as the file names their ends.
LINKS = (("generator.out", "router.in"), ("router.out", "sink.in"))
#: Each role's network namespace suffix on a testbed (``<prefix>-tg`` and so on: the
#: names the engines and the namespace testbed use), and back.
NAMESPACE_SUFFIX = {"generator": "tg", "router": "dut", "sink": "sink"}
ROLE_OF_SUFFIX = {v: k for k, v in NAMESPACE_SUFFIX.items()}
#: Each interface's name in datasets (the namespace testbed's links without its prefix).
LINK_NAMES = {"generator.out": "g0", "router.in": "d0", "router.out": "d1", "sink.in": "s0"}
#: ``[user@]host[:port]``; neither user nor host may start with "-" (ssh would read an option).
SSH_RE = re.compile(r"^(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]*)@)?"
                    r"(?P<host>[A-Za-z0-9][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])(?::(?P<port>\d{1,5}))?$")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
IFNAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: A testbed file's shape (:mod:`routerlab.yamlfile`); what the values must be together
#: (a host's SSH address, a link's ends) is :func:`load`'s.
HOST = yamlfile.Shape({"ssh": str, "python": str, "env": (yamlfile.MapOf(
    (str, float), what="a mapping of variable names to values (texts or numbers)"), None)}, required=("ssh",))
# a MAC address unquoted may be read as a number (YAML 1.1's base 60): load() says what it is
INTERFACE = yamlfile.Shape({"name": str, "mac": object}, required=("name", "mac"))
SHAPE = yamlfile.Shape({
    "hosts": yamlfile.MapOf(HOST, min=1, each="host {key}",
                            what="at least one host: name -> {ssh: user@host[:port]}"),
    "roles": yamlfile.Shape({r: yamlfile.Shape(
        {"host": str, "cpu": int,
         "interfaces": yamlfile.Shape(dict.fromkeys(ROLE_INTERFACES[r], INTERFACE), required=ROLE_INTERFACES[r],
                                      each="interface {key}")},
        required=("host", "interfaces")) for r in ROLES}, required=ROLES, each="role {key}"),
    "links": yamlfile.ListOf(yamlfile.ListOf(str, min=2, max=2, what="a pair of ends [role.interface, role.interface]"),
                             min=2, max=2, each="links: link {n}",
                             what="the two links: [generator.out, router.in] and [router.out, sink.in]"),
    "ssh_config": (str, None),
}, required=("hosts", "roles", "links"))


@dataclass(frozen=True)
class Host:
    """One host of a testbed: how to reach it and what to run routerlab with there.

    ``ssh`` is ``[user@]host[:port]`` (the user's SSH configuration and keys apply);
    ``python`` the Python with routerlab installed on that host (default ``python3``);
    ``env`` variables set for every routerlab command on it (its engines folder,
    ``ROUTERLAB_ENGINES_DIR``, for one)."""

    name: str
    ssh: str
    python: str = "python3"
    env: tuple[tuple[str, str], ...] = ()

    @property
    def destination(self) -> str:
        """The ``[user@]host`` that ssh is given (the port goes with ``-p``)."""
        m = SSH_RE.match(self.ssh)
        user, host = m.group("user"), m.group("host").strip("[]")
        return f"{user}@{host}" if user else host

    @property
    def port(self) -> int | None:
        p = SSH_RE.match(self.ssh).group("port")
        return int(p) if p else None


@dataclass(frozen=True)
class Interface:
    """A test interface of a role: its name on its host and its MAC address."""

    name: str
    mac: str


@dataclass(frozen=True)
class Role:
    """A role (generator, router or sink) on a host: the CPU its work is placed on and its
    interfaces by the file's names (``out``; ``in`` and ``out``; ``in``)."""

    role: str
    host: str
    cpu: int
    interfaces: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class TestbedFile:
    """A loaded, checked testbed file (:func:`load`)."""

    path: Path
    hosts: dict = field(hash=False)
    roles: dict = field(hash=False)
    ssh_config: Path | None = None

    @property
    def layout(self) -> int:
        """How many hosts the roles are on: 2 (generator and sink together) or 3."""
        return len({r.host for r in self.roles.values()})

    def host_of(self, role: str) -> Host:
        return self.hosts[self.roles[role].host]

    def interface(self, role: str, which: str) -> Interface:
        return self.roles[role].interfaces[which]

    def used_hosts(self) -> list[Host]:
        """The hosts some role is on, each once, in the order generator, router, sink."""
        names = list(dict.fromkeys(self.roles[r].host for r in ROLES))
        return [self.hosts[n] for n in names]


def load(path) -> TestbedFile:
    """Read and check the testbed file ``path``; one :class:`DataFormatError` line for the
    first thing wrong, naming the file and line, the host or role, and the key."""
    path = Path(path)
    doc = yamlfile.load(path, "the testbed file")
    doc = doc if doc is not None else {}
    yamlfile.check(doc, SHAPE, path)

    def fail(where: str, msg: str, at=None, key=None):
        raise DataFormatError(path, yamlfile.line_of(at if at is not None else doc, key), f"{where}: {msg}")

    hosts: dict[str, Host] = {}
    for name, h in doc["hosts"].items():
        where = f"host {name}"
        if not isinstance(name, str) or not NAME_RE.match(name):
            fail(where, "a host's name is letters, digits, '.', '_' and '-'", doc["hosts"], name)
        ssh = h["ssh"]
        m = SSH_RE.match(ssh)
        if not m or (m.group("port") and not 0 < int(m.group("port")) < 65536):
            fail(f"{where}: key 'ssh'", f"must be user@host[:port], got {ssh!r}", h, "ssh")
        python = h.get("python", "python3")
        if not python or any(c.isspace() for c in python):
            fail(f"{where}: key 'python'", f"must be a path or command without white space, got {python!r}", h, "python")
        env = h.get("env") or {}
        for k in env:
            if not isinstance(k, str) or not ENV_RE.match(k):
                fail(f"{where}: key 'env'", f"{k!r} is not a variable name", env, k)
        hosts[name] = Host(name, ssh, python, tuple((k, str(v)) for k, v in env.items()))

    raw_roles = doc["roles"]
    roles: dict[str, Role] = {}
    for r in ROLES:
        where = f"role {r}"
        spec = raw_roles[r]
        if spec["host"] not in hosts:
            fail(f"{where}: key 'host'", f"{spec['host']!r} is not one of the hosts ({', '.join(hosts)})", spec, "host")
        cpu = spec.get("cpu", 1 if r != "generator" else 0)
        if cpu < 0:
            fail(f"{where}: key 'cpu'", f"must be a CPU number >= 0, got {cpu!r}", spec, "cpu")
        found = {}
        for which, i in spec["interfaces"].items():
            w = f"{where}: interface {which}"
            if not IFNAME_RE.match(i["name"]):
                fail(f"{w}: key 'name'", f"not an interface name: {i['name']!r}", i, "name")
            mac = str(i["mac"]).lower()
            if not MAC_RE.match(mac):
                fail(f"{w}: key 'mac'", f"not a MAC address (xx:xx:xx:xx:xx:xx): {i['mac']!r}", i, "mac")
            found[which] = Interface(i["name"], mac)
        roles[r] = Role(r, spec["host"], cpu, found)

    for r in ROLES:
        names = [i.name for i in roles[r].interfaces.values()]
        if len(set(names)) < len(names):
            fail(f"role {r}: interfaces", f"{names[0]} is named twice: each interface is its own port",
                 raw_roles[r], "interfaces")
    router_host = roles["router"].host
    for r in ("generator", "sink"):
        if roles[r].host == router_host:
            fail(f"role {r}: key 'host'", f"{router_host} is the router's host: the router is on a host of its own",
                 raw_roles[r], "host")
    if roles["generator"].host == roles["sink"].host:
        names = [i.name for r in ("generator", "sink") for i in roles[r].interfaces.values()]
        if len(set(names)) < len(names):
            fail(f"host {roles['sink'].host}", f"interface {names[0]} is the generator's and the sink's",
                 raw_roles["sink"], "interfaces")
    unused = sorted(set(hosts) - {r.host for r in roles.values()})
    if unused:
        fail(f"host {unused[0]}", "no role is on it", doc["hosts"], unused[0])

    links = doc["links"]
    seen = set()
    for n, link in enumerate(links, 1):
        where = f"links: link {n}"
        for end in link:
            role, _, which = end.partition(".")
            if role not in ROLES or which not in ROLE_INTERFACES[role]:
                fail(where, f"{end!r} is no role's interface (generator.out, router.in, router.out, sink.in)",
                     links, n - 1)
        pair = tuple(sorted(link))
        match = [want for want in LINKS if tuple(sorted(want)) == pair]
        if not match:
            fail(where, f"{link[0]} to {link[1]}: the ends do not match; a testbed's links are "
                        f"{LINKS[0][0]} to {LINKS[0][1]} and {LINKS[1][0]} to {LINKS[1][1]}", links, n - 1)
        seen.add(match[0])
    if len(seen) != 2:
        fail("links", "the same link is named twice; the other is missing", doc, "links")

    ssh_config = doc.get("ssh_config")
    if ssh_config is not None:
        ssh_config = (path.parent / ssh_config).resolve()
        if not ssh_config.is_file():
            fail("key 'ssh_config'", f"{ssh_config} is not a file", doc, "ssh_config")
    return TestbedFile(path.resolve(), hosts, roles, ssh_config)
