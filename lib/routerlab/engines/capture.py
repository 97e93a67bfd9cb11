"""What an engine's capture sockets dropped, read from outside the engine.

An engine that captures with libpcap (bmv2's simple_switch) loses packets at its
AF_PACKET socket when it does not empty the socket's ring in time. The kernel counts them
(``tp_drops``), but the drop tracer of :mod:`routerlab.measuring.drops` cannot see them: the
socket's copy is a clone of an sk_buff the DUT still holds, and only the last free of an
sk_buff is traced. Only the socket's owner can ask for the count (``getsockopt
PACKET_STATISTICS``), and the engine keeps no counter of its own, so
:class:`CaptureDrops` takes a duplicate of each socket from the engine's process
(``pidfd_getfd``, Linux 5.6) and asks through it.

Reading resets the kernel's count, so :class:`CaptureDrops` keeps the running total, and
it must be the only reader: not for an engine that reads its own statistics (Click's
FromDevice does, through ``pcap_stats``; Click's engines read that handler instead).
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import struct
from dataclasses import dataclass, field

from routerlab.errors import RouterlabError
from routerlab.testbed.shell import sh

SYS_PIDFD_GETFD = 438  # the same number on every architecture (Linux 5.6)
SOL_PACKET, PACKET_STATISTICS = 263, 6
_libc = ctypes.CDLL(None, use_errno=True)


_libc.syscall.restype = ctypes.c_long


def _getfd(pidfd: int, fd: int) -> int:
    got = _libc.syscall(ctypes.c_long(SYS_PIDFD_GETFD), ctypes.c_int(pidfd), ctypes.c_int(fd), ctypes.c_uint(0))
    if got < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return got


@dataclass
class CaptureDrops:
    """The packet sockets of process ``pid`` (in namespace ``ns``), by interface.

    Attributes
    ----------
    pid : int
        The engine's process.
    ns : str
        Its network namespace (for the interfaces' names).
    """

    pid: int
    ns: str
    totals: dict[str, int] = field(default_factory=dict)
    _socks: list = field(default_factory=list, repr=False)

    def open(self) -> "CaptureDrops":
        """Take a duplicate of each of the process's AF_PACKET sockets (found by inode in
        the namespace's ``/proc/<pid>/net/packet``).

        Raises :class:`RouterlabError` naming what is missing where that cannot be done:
        ``pidfd_getfd`` needs Linux 5.6 and the right to trace the process (root; Yama's
        ``ptrace_scope`` below 3; in a container, CAP_SYS_PTRACE)."""
        try:
            return self._open()
        except OSError as e:
            self.close()
            raise RouterlabError(f"cannot read the capture sockets' drops of process {self.pid}: {e} "
                                 "(needs Linux 5.6 or later and the right to trace the process: root, "
                                 "kernel.yama.ptrace_scope < 3, CAP_SYS_PTRACE in a container)") from None

    def _open(self) -> "CaptureDrops":
        names = {str(link["ifindex"]): link["ifname"]
                 for link in json.loads(sh("ip", "-n", self.ns, "-j", "link", "show"))}
        ifaces = {}  # socket inode -> interface name
        with open(f"/proc/{self.pid}/net/packet") as f:
            next(f)
            for line in f:
                col = line.split()  # sk RefCnt Type Proto Iface R Rmem User Inode
                ifaces[col[8]] = names.get(col[4], f"ifindex{col[4]}")
        pidfd = os.pidfd_open(self.pid)
        try:
            for fd in os.listdir(f"/proc/{self.pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{self.pid}/fd/{fd}")
                except OSError:
                    continue  # closed meanwhile
                inode = target[len("socket:["):-1] if target.startswith("socket:[") else None
                if inode in ifaces:
                    s = socket.socket(fileno=_getfd(pidfd, int(fd)))
                    self._socks.append((ifaces[inode], s))
                    self.totals.setdefault(ifaces[inode], 0)
        finally:
            os.close(pidfd)
        if not self._socks:
            raise RouterlabError(f"process {self.pid} has no packet socket to read drops from")
        self.read()  # what the start-up dropped is not any trial's
        self.totals = dict.fromkeys(self.totals, 0)
        return self

    def read(self) -> dict[str, int]:
        """Packets each interface's capture socket dropped since :meth:`open`."""
        for iface, s in self._socks:
            raw = s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 12)
            self.totals[iface] += struct.unpack_from("II", raw)[1]  # tp_packets, tp_drops[, freezes]
        return dict(self.totals)

    def close(self):
        for _, s in self._socks:
            s.close()
        self._socks.clear()
