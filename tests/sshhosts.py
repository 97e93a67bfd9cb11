"""Testbed hosts on this machine for the SSH testbed's tests: each "host" a network
namespace with its own OpenSSH server, its own /run (a mount namespace of its own: its
state folder, its namespace handles), its own home folder, cache and engines folder, and
keys made by the test. Test links are veth pairs between the hosts' namespaces; the client
reaches each server on the host's loopback through ``ip netns exec ... nc`` (a
ProxyCommand in the test's own ssh_config), so nothing is added to this machine's own
interfaces or routes."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

SSHD = "/usr/sbin/sshd"
BACKLOG = Path("/proc/sys/net/core/netdev_max_backlog").read_text().strip()


def missing() -> str | None:
    """What this machine lacks to run the hosts (one line), or None."""
    for tool, pkg in ((SSHD, "openssh-server"), ("ssh", "openssh-client"), ("ssh-keygen", "openssh-client"),
                      ("nc", "netcat-openbsd"), ("unshare", "util-linux")):
        if not shutil.which(tool):
            return f"{tool} is not installed (Debian package {pkg})"
    return None


def sh(*args, **kw) -> str:
    return subprocess.run(list(args), check=True, capture_output=True, text=True, **kw).stdout


class Hosts:
    """Two or three hosts wired as a testbed file's roles; :meth:`write` writes the file.

    ``layout=2``: ``loadgen`` (generator and sink) and ``dut``; ``layout=3``: ``gen``,
    ``dut`` and ``sink``. The interfaces are ``eth1`` and ``eth2`` on every host."""

    def __init__(self, folder: Path, layout: int = 2):
        self.folder = Path(folder)
        self.tag = "rlhost" + secrets.token_hex(3)
        self.layout = layout
        self.names = ["loadgen", "dut"] if layout == 2 else ["gen", "dut", "sink"]
        self.servers: dict[str, subprocess.Popen] = {}

    def ns(self, host: str) -> str:
        return f"{self.tag}-{host}"

    def home(self, host: str) -> Path:
        return self.folder / host / "home"

    def __enter__(self):
        try:
            self._up()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _up(self):
        f = self.folder
        f.mkdir(parents=True, exist_ok=True)
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(f / "id"))
        (f / "authorized_keys").write_text((f / "id.pub").read_text())
        known, config = [], []
        for h in self.names:
            d = f / h
            (d / "home").mkdir(parents=True)
            (d / "engines").mkdir()
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "hostkey"))
            known.append(f"{h} " + " ".join((d / "hostkey.pub").read_text().split()[:2]))
            (d / "sshd_config").write_text(
                f"ListenAddress 127.0.0.1\nHostKey {d / 'hostkey'}\nAuthorizedKeysFile {f / 'authorized_keys'}\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                "UsePAM no\nStrictModes no\nPidFile none\nLogLevel ERROR\n")
            sh("ip", "netns", "add", self.ns(h))
            sh("ip", "-n", self.ns(h), "link", "set", "lo", "up")
            # its own /run, as a host has: sshd's privilege separation folder, routerlab's state
            self.servers[h] = subprocess.Popen(
                ["ip", "netns", "exec", self.ns(h), "unshare", "--mount", "--propagation", "private", "sh", "-c",
                 "mount -t tmpfs tmpfs /run && mkdir -p /run/sshd && exec " + SSHD + f" -D -e -f {d / 'sshd_config'}"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(d / "sshd.log", "w"),
                start_new_session=True)
            config.append(f"Host {h}\n  HostName 127.0.0.1\n  User root\n  IdentityFile {f / 'id'}\n"
                          f"  IdentitiesOnly yes\n  HostKeyAlias {h}\n  UserKnownHostsFile {f / 'known_hosts'}\n"
                          f"  ProxyCommand ip netns exec {self.ns(h)} nc 127.0.0.1 22\n")
        (f / "known_hosts").write_text("\n".join(known) + "\n")
        (f / "ssh_config").write_text("\n".join(config))
        gen, sink = (("loadgen", "loadgen") if self.layout == 2 else ("gen", "sink"))
        self.roles = {"generator": (gen, "eth1"), "router": ("dut", None), "sink": (sink, "eth2")}
        self._veth(gen, "eth1", "dut", "eth1")
        self._veth("dut", "eth2", sink, "eth1" if self.layout == 3 else "eth2")
        if self.layout == 3:
            self.roles["sink"] = (sink, "eth1")
        deadline = time.monotonic() + 10
        for h in self.names:
            while sh("ip", "netns", "exec", self.ns(h), "sh", "-c", "ss -ltn | grep -c ':22 ' || true").strip() == "0":
                if self.servers[h].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sshd of {h} did not start: {(f / h / 'sshd.log').read_text()}")
                time.sleep(0.05)

    def _veth(self, a: str, ia: str, b: str, ib: str):
        tmp_a, tmp_b = f"{self.tag[-6:]}{a[:3]}{ia[-1]}", f"{self.tag[-6:]}{b[:3]}{ib[-1]}x"
        sh("ip", "link", "add", tmp_a, "netns", self.ns(a), "type", "veth", "peer", "name", tmp_b, "netns", self.ns(b))
        sh("ip", "-n", self.ns(a), "link", "set", tmp_a, "name", ia)
        sh("ip", "-n", self.ns(b), "link", "set", tmp_b, "name", ib)

    def mac(self, host: str, dev: str) -> str:
        return json.loads(sh("ip", "-n", self.ns(host), "-j", "link", "show", "dev", dev))[0]["address"]

    def spec(self, python: str = sys.executable) -> dict:
        """The testbed file's content for these hosts."""
        gen, _ = self.roles["generator"]
        sink, sink_if = self.roles["sink"]
        hosts = {h: {"ssh": h, "python": python,
                     "env": {"HOME": str(self.home(h)), "ROUTERLAB_ENGINES_DIR": str(self.folder / h / "engines"),
                             # a host that is a namespace cannot read the machine's backlog
                             "ROUTERLAB_NETDEV_MAX_BACKLOG": BACKLOG}}
                 for h in self.names}
        return {"ssh_config": "ssh_config", "hosts": hosts,
                "roles": {"generator": {"host": gen, "cpu": 0,
                                        "interfaces": {"out": {"name": "eth1", "mac": self.mac(gen, "eth1")}}},
                          "router": {"host": "dut", "cpu": 1,
                                     "interfaces": {"in": {"name": "eth1", "mac": self.mac("dut", "eth1")},
                                                    "out": {"name": "eth2", "mac": self.mac("dut", "eth2")}}},
                          "sink": {"host": sink, "cpu": 0 if self.layout == 2 else 1,
                                   "interfaces": {"in": {"name": sink_if, "mac": self.mac(sink, sink_if)}}}},
                "links": [["generator.out", "router.in"], ["router.out", "sink.in"]]}

    def write(self, spec: dict | None = None, name: str = "hosts.yaml") -> Path:
        path = self.folder / name
        path.write_text(yaml.safe_dump(spec or self.spec(), sort_keys=False))
        return path

    def state(self, host: str) -> dict:
        """What a host's network set-up is now: addresses, routes, neighbours, nftables,
        sysctls, RPS and link state of its test interfaces, the namespace handles and
        routerlab's state files in its own /run, its processes other than sshd."""
        ns = self.ns(host)
        pid = self.servers[host].pid  # sshd, in the host's own mount namespace (its /run)

        def run(*a):
            return subprocess.run(["nsenter", "-t", str(pid), "-m", "-n", *a], capture_output=True, text=True).stdout

        rps = {d: run("cat", f"/sys/class/net/{d}/queues/rx-0/rps_cpus").strip() for d in ("eth1", "eth2")
               if run("cat", f"/sys/class/net/{d}/ifindex").strip()}
        sysctls = run("sysctl", "net.ipv4.ip_forward", "net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter",
                      "net.ipv4.conf.all.send_redirects", "net.ipv6.conf.eth1.disable_ipv6",
                      "net.ipv6.conf.eth2.disable_ipv6")
        features = {d: run("ethtool", "-k", d) for d in ("eth1", "eth2")}
        procs = sorted(_cmdline(p) for p in set(sh("ip", "netns", "pids", ns).split()) - {str(pid)}
                       - set(sh("pgrep", "sshd").split()))
        return {"addr": run("ip", "-br", "addr"), "route": run("ip", "route", "show", "table", "all"),
                # the kernel gives a link its default qdisc the first time it goes up and
                # leaves it when it goes down again: not a change of the run's
                "neigh": run("ip", "neigh"), "link": re.sub(r"qdisc \S+ ", "", run("ip", "-d", "link")),
                "features": features,
                "nft": run("nft", "list", "ruleset"), "sysctl": sysctls, "rps": rps,
                "handles": run("ls", "/run/netns"), "state": run("ls", "/run/routerlab"), "procs": procs}

    def __exit__(self, *exc):
        for h, p in self.servers.items():
            for pid in sh("ip", "netns", "pids", self.ns(h)).split() if _exists(self.ns(h)) else []:
                subprocess.run(["kill", "-9", pid], capture_output=True)
            p.kill()
            p.wait()
        for h in self.names:
            subprocess.run(["ip", "netns", "del", self.ns(h)], capture_output=True)
        return False


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace").replace("\0", " ").strip()
    except OSError:  # ended meanwhile
        return ""


def _exists(ns: str) -> bool:
    return Path("/run/netns", ns).exists()
