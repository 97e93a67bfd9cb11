"""What a run changes on a host that is not routerlab's own, listed as it is made and
undone afterwards: the journal of a testbed host beyond one machine.

On the namespace testbed every change (addresses, routes, sysctls, nftables tables, XDP
programs, RPS masks) is made inside namespaces that the run removes. On a host reached over
SSH (:mod:`routerlab.remote.sshtestbed`) the router's set-up happens in the host's own network
namespace, on its named interfaces, so each change is journalled before it is made,
with the command that undoes it, and undone in reverse order when the run ends.

The journal sees every command routerlab runs on the host (:func:`routerlab.testbed.shell.sh`
hands each to :func:`before` while a journal is open), so the engines need no change of
their own: ``sysctl -w`` (the old value read first), ``ip addr|route|neigh add|replace``,
``ip link set ... xdp*``, ``ip link set ... up``, ``nft -f`` (each ``table`` it creates),
``ethtool -K`` (the old features read first), writes to ``/sys/class/net/*/...`` through
``sh -c "echo V > F"`` (the old content read first), ``taskset -p`` and ``chrt -p`` on a
thread (its old affinity or policy), and the fill routes of a large route table. A command
that changes something it cannot undo is refused before it runs.

The journal is kept in a file under the state folder (``<prefix>-changes.json``), written
before each change, so that ``routerlab clean`` on that host undoes what a killed run
left (:func:`restore_left`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from routerlab import processes
from routerlab.errors import HostChangeRefused
from routerlab.testbed import shell
from routerlab.testbed.interface import FILL_NET

#: The journal open in this process (one host's), or None on the namespace testbed.
_open: "Journal | None" = None

#: Commands, by their first word(s), that change nothing.
READ_ONLY = {
    ("ip", "-j"), ("ip", "-s"), ("ip", "-d"), ("nft", "-j"), ("nft", "list"), ("nft", "--version"),
    ("ethtool", "-i"), ("ethtool", "-S"), ("ethtool", "-k"), ("bpftool",), ("pgrep",), ("ss",), ("uname",),
    ("cat",), ("sysctl", "-n"), ("tc", "-s"), ("tc", "-j"), ("clang",), ("true",), ("ip", "route", "show"),
}
#: ethtool's short names of features (``-K``) and the names ``-k`` shows them by.
ETHTOOL_ALIASES = {"gro": "generic-receive-offload", "gso": "generic-segmentation-offload",
                   "tso": "tcp-segmentation-offload", "lro": "large-receive-offload", "sg": "scatter-gather",
                   "rx": "rx-checksumming", "tx": "tx-checksumming", "rxvlan": "rx-vlan-offload",
                   "txvlan": "tx-vlan-offload", "ntuple": "ntuple-filters", "rxhash": "receive-hashing"}


class Journal:
    """The changes of one run on this host, each with the command that undoes it."""

    def __init__(self, path: Path, namespaces: list[str]):
        self.path = Path(path)
        self.namespaces = set(namespaces)
        self.undo: list[list[str]] = []
        self.listed: list[str] = []

    def __enter__(self):
        global _open
        self._save()
        _open = self
        shell.journal = sys.modules[__name__]
        return self

    def __exit__(self, *exc):
        global _open
        _open = None
        shell.journal = None
        return False

    def _save(self):
        processes.write_state(self.path, {"pid": os.getpid(), "undo": self.undo, "changes": self.listed})

    def add(self, change: str, undo: list[list[str]]):
        self.listed.append(change)
        self.undo.extend(undo)
        self._last = (len(self.listed), len(undo))
        self._save()

    def failed(self):
        """The command just journalled failed: it changed nothing, so nothing is undone
        for it (an address it could not add may be the host's own)."""
        n, k = getattr(self, "_last", (None, 0))
        if n is not None and n == len(self.listed):
            self.listed.pop()
            del self.undo[len(self.undo) - k:]
            self._save()
        self._last = (None, 0)

    def restore(self) -> list[str]:
        """Undo every change, newest first; returns what could not be undone (one line each)."""
        failed = _undo(self.undo)
        self.undo.clear()
        self.path.unlink(missing_ok=True)
        return failed

    def _before(self, argv: list[str], input: str | None):
        """Journal what ``argv`` changes, before it runs (:func:`before`)."""
        cmd = _inner(argv, self)
        if cmd is None or not cmd:
            return
        name = os.path.basename(cmd[0])
        words = [w for w in cmd[1:]]
        line = shlex.join(cmd)
        for ro in READ_ONLY:
            if (name,) + tuple(words[:len(ro) - 1]) == ro:
                return
        if name == "sysctl":
            sets = [w for w in words if "=" in w]
            if not sets:
                return
            undo = []
            for s in sets:
                key = s.split("=", 1)[0]
                old = _read(["sysctl", "-n", key]).strip()
                if old:
                    undo.append(["sysctl", "-qw", f"{key}={old}"])
            return self.add(line, undo)
        if name == "ip":
            obj = words[0] if words else ""
            verb = words[1] if len(words) > 1 else ""
            if obj in ("addr", "address", "route", "neigh") and verb in ("add", "replace", "change"):
                target = words[2:]
                dev = _value_after(words, "dev")
                if obj == "route":
                    old = _read(["ip", "-j", "route", "show", "exact", target[0]]) if target else ""
                    undo = [["ip", "route", "del", target[0]]]
                    if old.strip() not in ("", "[]"):
                        raise HostChangeRefused(f"{line}: would replace the host's own route to {target[0]}")
                elif obj == "neigh":
                    old = _read(["ip", "-j", "neigh", "show", "to", target[0], "dev", dev])
                    if '"lladdr"' in old and "PERMANENT" in old:
                        raise HostChangeRefused(f"{line}: would replace the host's own neighbour entry for {target[0]}")
                    undo = [["ip", "neigh", "del", target[0], "dev", dev]]
                else:
                    net = str(ipaddress.ip_interface(target[0]).network)
                    old = _read(["ip", "-j", "-4", "addr", "show"])
                    held = [a["ifname"] for a in json.loads(old or "[]") for i in a.get("addr_info", [])
                            if ipaddress.ip_interface(f"{i['local']}/{i['prefixlen']}").network.overlaps(
                                ipaddress.ip_network(net))]
                    if held:
                        raise HostChangeRefused(f"{line}: the host has an address in {net} already ({held[0]}): "
                                                "routerlab's test links need that network to themselves")
                    undo = [["ip", "addr", "del", target[0], "dev", dev]]
                return self.add(line, undo)
            if obj == "link" and verb == "set":
                dev = _value_after(words, "dev") or (words[2] if len(words) > 2 else "")
                mode = next((w for w in words if w.startswith("xdp")), None)
                if mode:
                    return self.add(line, [["ip", "link", "set", "dev", dev, mode, "off"]])
                if "up" in words:
                    state = _read(["ip", "-j", "link", "show", "dev", dev])
                    was_up = '"UP"' in state.split('"flags"', 1)[-1].split("]", 1)[0]
                    return self.add(line, [] if was_up else [["ip", "link", "set", "dev", dev, "down"]])
            raise HostChangeRefused(f"{line}: a change the journal of this host cannot undo")
        if name == "nft":
            if words[:2] == ["-f", "-"]:
                tables = re.findall(r"^\s*table\s+(\w+)\s+(\w+)", input or "", re.M)
                existing = _read(["nft", "list", "tables"])
                for fam, tname in tables:
                    if f"table {fam} {tname}" in existing:
                        raise HostChangeRefused(f"nft table {fam} {tname} exists on this host already: "
                                                "routerlab does not change it")
                return self.add(f"nft tables {', '.join(f'{f} {t}' for f, t in tables)}",
                                [["nft", "delete", "table", f, t] for f, t in tables])
            if words[:1] == ["delete"]:
                return
            raise HostChangeRefused(f"{line}: a change the journal of this host cannot undo")
        if name == "ethtool" and words[:1] in (["-K"], ["--features"], ["--offload"]):
            dev = words[1]
            old = {}
            for ln in _read(["ethtool", "-k", dev]).splitlines():
                m = re.match(r"\s*([\w-]+):\s+(on|off)", ln)
                if m:
                    old[m.group(1)] = m.group(2)
            undo = ["ethtool", "-K", dev]
            for feat in words[2::2]:
                long = ETHTOOL_ALIASES.get(feat, feat)
                if long in old:
                    undo += [feat, old[long]]
                else:
                    raise HostChangeRefused(f"{line}: {dev} has no feature {feat} to read back")
            return self.add(line, [undo] if len(undo) > 3 else [])
        if name == "sh" and words[:1] == ["-c"]:
            m = re.fullmatch(r"echo (\S+) > (/sys/class/net/[\w.:-]+/[\w/.-]+|/proc/sys/[\w/.-]+)", words[1].strip())
            if not m:
                raise HostChangeRefused(f"{line}: a change the journal of this host cannot undo")
            try:
                old = Path(m.group(2)).read_text().strip()
            except OSError:
                old = ""
            return self.add(line, [["sh", "-c", f"echo {shlex.quote(old)} > {m.group(2)}"]] if old else [])
        if name in ("taskset", "chrt") and "-p" in " ".join(words):
            pid = words[-1]
            if name == "taskset":
                old = _read(["taskset", "-pc", pid]).rsplit(":", 1)[-1].strip()
                return self.add(line, [["taskset", "-pc", old, pid]] if old else [])
            out = _read(["chrt", "-p", pid])
            pol = re.search(r"policy: SCHED_(\w+)", out)
            prio = re.search(r"priority: (\d+)", out)
            flag = {"OTHER": "-o", "FIFO": "-f", "RR": "-r", "BATCH": "-b", "IDLE": "-i"}.get(pol.group(1) if pol else "", "-o")
            return self.add(line, [["chrt", flag, "-p", prio.group(1) if prio else "0", pid]])
        if cmd[1:3] == ["-m", "routerlab.testbed.netlink_routes"]:
            if _read(["ip", "route", "show", "root", str(FILL_NET)]).strip():
                raise HostChangeRefused(f"the host has routes in {FILL_NET}, where routerlab puts a large "
                                        "table's fill routes")
            return self.add(f"fill routes in {FILL_NET}", [["ip", "route", "flush", "root", str(FILL_NET)]])
        # anything else run on the host (the engines' own processes, mount, compilers) changes
        # nothing of the host's network set-up


def _undo(steps: list[list[str]]) -> list[str]:
    failed = []
    for argv in reversed(steps):
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0 and "No such" not in p.stderr and "Cannot find" not in p.stderr:
            failed.append(f"{shlex.join(argv)}: {p.stderr.strip() or p.returncode}")
    return failed


def restore_left(state_dir: Path, alive) -> list[str]:
    """Undo the journals that dead runs left in ``state_dir`` (their process no longer
    ``alive``); returns what was restored and what failed, one line each."""
    done = []
    for f in sorted(Path(state_dir).glob("rl*-changes.json")):
        st = processes.read_state(f, drop_unreadable=True)
        if st is None or processes.owner_alive(st, alive):
            continue
        failed = _undo(st.get("undo", []))
        run = f.name.removesuffix("-changes.json")
        done += [f"set-up of {run}: {c}" for c in st.get("changes", [])]
        done += [f"could not undo the set-up of {run}: {x}" for x in failed]
        f.unlink(missing_ok=True)
    return done


def _read(argv: list[str]) -> str:
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else ""


def before(argv: list[str], input: str | None = None):
    """Journal what ``argv`` is about to change on this host (a no-op without an open
    journal); :func:`after` says how it went."""
    if _open is not None:
        _open._last = (None, 0)
        _open._before(list(argv), input)


def after(ok: bool):
    """The command :func:`before` journalled ran (``ok``) or failed (its change dropped)."""
    if _open is not None and not ok:
        _open.failed()


def _inner(argv: list[str], journal: Journal) -> list[str] | None:
    """The command as it runs on the host: without ``ip netns exec NS`` or ``ip -n NS`` of
    one of the journal's namespaces, without ``taskset -c N``; None for another namespace's."""
    if argv[:3] == ["ip", "netns", "exec"]:
        if argv[3] not in journal.namespaces:
            return None
        argv = argv[4:]
    elif argv[:2] == ["ip", "-n"]:
        if argv[2] not in journal.namespaces:
            return None
        argv = ["ip"] + argv[3:]
    if argv[:2] == ["taskset", "-c"]:
        argv = argv[3:]
    return argv


def _value_after(argv: list[str], word: str) -> str | None:
    return argv[argv.index(word) + 1] if word in argv and argv.index(word) + 1 < len(argv) else None
