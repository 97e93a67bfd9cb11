"""Single packets through a router on the testbed: send frames from one namespace, capture
what arrives on other interfaces. For functional checks (TTL, LPM choice, ACL drops, GRE
headers, reroute), not for load: :mod:`routerlab.testbed.traffic` does that.

Both ends run as small Python processes inside their namespaces on raw AF_PACKET
sockets; frames are plain bytes, so callers build and parse them with scapy.
"""

from __future__ import annotations

import subprocess
import sys
import time

from routerlab.errors import RouterlabError
from routerlab.testbed.interface import Testbed

_CAPTURE = r"""
import select, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(263, 23, 1)  # SOL_PACKET, PACKET_IGNORE_OUTGOING: what arrives, not what we send
s.bind((sys.argv[1], 0))
types = [bytes.fromhex(t) for t in sys.argv[2].split(",")]
print("ready", flush=True)
sys.stdin.readline()               # the parent says when to stop
while select.select([s], [], [], 0)[0]:
    f = s.recv(65535)
    if f[12:14] in types:          # the kernel's own chatter (IPv6, LLDP) is not ours
        print(f.hex(), flush=True)
"""

_SEND = r"""
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
gap = float(sys.argv[2])
for h in sys.argv[3:]:
    s.send(bytes.fromhex(h))
    time.sleep(gap)
"""


def send_frames(ns: str, dev: str, frames: list[bytes], gap: float = 0.01) -> None:
    """Send ``frames`` out of interface ``dev`` of namespace ``ns``, ``gap`` seconds apart."""
    p = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", _SEND, dev, str(gap),
                        *[f.hex() for f in frames]], capture_output=True, text=True, timeout=60)
    if p.returncode:
        raise RouterlabError(f"sending on {ns}/{dev} failed: {p.stderr.strip()}")


def exchange(tb: Testbed, send: tuple[str, str], frames: list[bytes],
             listen: dict[str, tuple[str, str]], settle: float = 0.3, gap: float = 0.01,
             ethertypes: tuple[int, ...] = (0x0800,)) -> dict[str, list[bytes]]:
    """Send ``frames`` out of ``send`` = (namespace, interface); return the frames of
    ``ethertypes`` (default IPv4 only) that arrived on each interface of ``listen``
    (name -> (namespace, interface)) meanwhile.

    ``settle`` is how long (seconds) to keep listening after the last frame; ``gap`` the
    pause between frames (seconds), so that state a frame leaves behind (a register, a
    rule) is in place before the next one arrives.
    """
    caps = {}
    try:
        for name, (ns, dev) in listen.items():
            p = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", _CAPTURE, dev,
                                  ",".join(f"{t:04x}" for t in ethertypes)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            caps[name] = p
            if p.stdout.readline().strip() != "ready":
                raise RouterlabError(f"capture on {ns}/{dev} failed: {p.stderr.read().strip()}")
        send_frames(*send, frames, gap)
        time.sleep(settle)
        out = {}
        for name, c in caps.items():
            text, err = c.communicate("stop\n", timeout=10)
            if c.returncode:
                raise RouterlabError(f"capture {name} failed: {err.strip()}")
            out[name] = [bytes.fromhex(line) for line in text.split()]
        return out
    finally:
        for c in caps.values():
            if c.poll() is None:
                c.kill()
                c.wait()
