"""What a measurement asks of a testbed, whichever it is: the :class:`Testbed` protocol, and the
address plan and names every testbed shares.

Three implementations: the namespace testbed on this machine
(:class:`routerlab.testbed.namespaces.NamespaceTestbed`), the SSH testbed over several hosts
(:class:`routerlab.remote.sshtestbed.SshTestbed`) and the fast-reroute network
(:class:`routerlab.measuring.measurement.fastreroute.RerouteNet`). A sweep, a search, trial validation
and loss attribution call only what the protocol names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from routerlab import defaults

STATE_DIR = Path(os.environ.get("ROUTERLAB_STATE_DIR", "/run/routerlab"))
#: Where a run pins its BPF objects (routerlab.measuring.drops), one folder per testbed prefix.
BPF_PINS = Path("/sys/fs/bpf/routerlab")
PREFIX_RE = re.compile(r"^rl[0-9a-f]{6}$")
NS_RE = re.compile(r"^(rl[0-9a-f]{6})-(tg|dut|sink|src|dst|r[1-4])$")

#: Addresses inside the testbed (only ever configured inside its own namespaces).
TG_NET, SINK_NET = "10.70.1", "10.70.2"
#: Destinations the traffic is sent to: one /24 behind the sink.
DEST_NET = "10.71.0"
GENERATORS = defaults.GENERATORS
