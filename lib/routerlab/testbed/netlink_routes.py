"""Load many IPv4 host routes fast: RTM_NEWROUTE messages in 64 KiB netlink batches.

``ip -batch`` waits for the kernel's answer to every route (900k routes: ~30 s here).
This sends requests without asking for acknowledgements, many per send(), and then
reads back any error the kernel reports (errors are sent even without NLM_F_ACK), so a
failure is never silent. Run inside the target namespace::

    ip netns exec NS python -m routerlab.testbed.netlink_routes FIRST_IP COUNT GATEWAY IFNAME
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import sys

RTM_NEWROUTE, NLMSG_ERROR = 24, 2
NLM_F_REQUEST, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x200, 0x400
RT_TABLE_MAIN, RTPROT_STATIC, RT_SCOPE_UNIVERSE, RTN_UNICAST = 254, 4, 0, 1
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5
BATCH_BYTES = 64 * 1024


def load(first: str, count: int, gateway: str, ifname: str) -> int:
    """Add ``count`` /32 routes ``first``, ``first+1``, ... via ``gateway`` on ``ifname``.

    Returns
    -------
    int
        Number of routes the kernel refused (0 on success).
    """
    oif = socket.if_nametoindex(ifname)
    gw = ipaddress.IPv4Address(gateway).packed
    base = int(ipaddress.IPv4Address(first))
    head = struct.pack("=BBBBBBBBI", socket.AF_INET, 32, 0, 0, RT_TABLE_MAIN, RTPROT_STATIC,
                       RT_SCOPE_UNIVERSE, RTN_UNICAST, 0)
    tail = struct.pack("=HH4s", 8, RTA_GATEWAY, gw) + struct.pack("=HHI", 8, RTA_OIF, oif)
    size = 16 + len(head) + 8 + len(tail)
    flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((0, 0))
    errors = 0
    per_batch = BATCH_BYTES // size
    for start in range(0, count, per_batch):
        buf = bytearray()
        for i in range(start, min(start + per_batch, count)):
            dst = (base + i).to_bytes(4, "big")
            buf += struct.pack("=IHHII", size, RTM_NEWROUTE, flags, i + 1, 0) + head
            buf += struct.pack("=HH4s", 8, RTA_DST, dst) + tail
        s.send(bytes(buf))
        errors += _drain(s)
    return errors


def _drain(s: socket.socket) -> int:
    """Count error answers waiting on the socket (non-blocking)."""
    errors = 0
    while True:
        try:
            data = s.recv(1 << 20, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return errors
        off = 0
        while off + 16 <= len(data):
            length, kind = struct.unpack_from("=IH", data, off)
            if kind == NLMSG_ERROR and struct.unpack_from("=i", data, off + 16)[0] != 0:
                errors += 1
            off += (length + 3) & ~3


if __name__ == "__main__":
    first, count, gateway, ifname = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    failed = load(first, count, gateway, ifname)
    if failed:
        print(f"netlink_routes: the kernel refused {failed} of {count} routes", file=sys.stderr)
        sys.exit(1)
