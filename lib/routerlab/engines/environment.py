"""The shell environment in which routerlab's engines are the ones a command finds.

p4lang/tutorials (and other P4 teaching material) call ``p4c``, ``simple_switch_grpc``,
``simple_switch_CLI`` and ``ptf`` by name and import the P4Runtime Python modules of
p4lang/PI (``p4.v1``, ``p4.config.v1``, ``p4.tmp``). :func:`variables` gives the
``PATH`` and ``PYTHONPATH`` that put routerlab's installed builds first (``routerlab
engines env`` prints them); :func:`run` runs a command with them (``routerlab engines
run``), optionally in network, PID and mount namespaces of its own, where the command may
create interfaces and kill every ``simple_switch`` it sees without touching the host's.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from routerlab import processes
from routerlab.errors import EngineNotFound, RouterlabError
from routerlab.engines import builds
from routerlab.engines.base import find_binary

#: What the P4 tutorials call, by engine: (engine, binary) in the order they are looked for.
PROGRAMS = (("p4c", "p4c"), ("p4c", "p4c-bm2-ss"), ("bmv2", "simple_switch_grpc"), ("bmv2", "simple_switch"),
            ("bmv2", "simple_switch_CLI"))


def bmv2_build(log_build: bool | None = None) -> str:
    """The bmv2 build whose programs come first: ``bmv2-log`` (its logs show every
    packet's tables and actions, what a student debugging a program reads) where it is
    installed and ``log_build`` is not False, else ``bmv2``."""
    if log_build is False:
        return "bmv2"
    try:
        find_binary("bmv2-log", "simple_switch_grpc")
        return "bmv2-log"
    except EngineNotFound:
        if log_build:
            raise
        return "bmv2"


def python_modules(prefix: Path) -> Path | None:
    """The folder of the P4Runtime Python modules (``p4/v1``...) p4lang/PI installed into
    bmv2's ``prefix``, or None."""
    found = sorted(prefix.glob("lib/python3*/site-packages/p4/v1/p4runtime_pb2.py"))
    return found[-1].parents[2] if found else None


def variables(log_build: bool | None = None) -> dict[str, str]:
    """``PATH`` and ``PYTHONPATH`` (each prepended to the current value) that make
    routerlab's p4c and bmv2 (:func:`bmv2_build`), this Python's programs (``ptf``) and
    PI's P4Runtime modules the ones found. Raises :class:`EngineNotFound` naming the
    install command when p4c or bmv2 with ``simple_switch_grpc`` is missing."""
    bmv2 = bmv2_build(log_build)
    dirs = []
    for engine, binary in PROGRAMS:
        path = Path(find_binary(bmv2 if engine == "bmv2" else engine, binary))
        if path.parent not in dirs:
            dirs.append(path.parent)
    dirs.append(Path(sys.executable).parent)  # ptf, installed with routerlab[tutorials]
    prefix = Path(find_binary(bmv2, "simple_switch_grpc")).parent.parent
    modules = python_modules(prefix)
    if modules is None:
        raise EngineNotFound(f"{bmv2}: no P4Runtime Python modules (p4/v1) under {prefix}: "
                             f"reinstall it ({builds.how_to_get(bmv2)})")
    env = {"PATH": os.pathsep.join([*map(str, dirs), os.environ.get("PATH", os.defpath)])}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(modules), os.environ.get("PYTHONPATH", "")) if p)
    return env


def exports(log_build: bool | None = None) -> str:
    """:func:`variables` as ``export`` lines for a POSIX shell."""
    import shlex

    return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in variables(log_build).items())


#: Run as root (or root of a user namespace), ``sudo`` only runs its command: this one
#: does so without resetting ``PATH`` (sudo's secure_path would find no routerlab engine,
#: and a user namespace's root cannot use the real, setuid sudo).
SUDO = """#!/bin/sh
# routerlab engines run: already root here, so sudo's options are dropped and the command runs as it is
while [ $# -gt 0 ]; do
    case "$1" in
        -E|-H|-n|-S|--preserve-env|--preserve-env=*) shift ;;
        -u|-g) shift 2 ;;
        --) shift; break ;;
        -*) shift ;;
        *) break ;;
    esac
done
exec "$@"
"""


# SIGKILL: unshare --fork blocks the signals it could be asked to stop with
_killed_with_parent = processes.dies_with_parent(signal.SIGKILL)


def run(command: list[str], *, isolated: bool = False, log_build: bool | None = None, cwd: str | None = None) -> int:
    """Run ``command`` with :func:`variables`; return its exit status.

    ``isolated``: in network, PID and mount namespaces of its own (and, without root, a
    user namespace in which it is root), with only ``lo`` (up); everything it starts is
    gone when it ends, or when this call is interrupted. There ``sudo`` runs its command
    as it is (:data:`SUDO`), so scripts that call ``sudo simple_switch_grpc`` find
    routerlab's."""
    if not command:
        raise RouterlabError("routerlab engines run: no command given (e.g. routerlab engines run -- make test)")
    env = dict(os.environ, **variables(log_build))
    with tempfile.TemporaryDirectory(prefix="routerlab-run-") as tmp:
        if isolated:
            if not shutil.which("unshare"):
                raise EngineNotFound("routerlab engines run --isolated needs unshare (Debian package util-linux)")
            if os.geteuid() != 0:
                from routerlab.testbed import userns

                why = userns.missing()
                if why:
                    raise RouterlabError(f"routerlab engines run --isolated: without root it needs a user namespace, "
                                         f"and {why}")
            shim = Path(tmp) / "sudo"
            shim.write_text(SUDO)
            shim.chmod(0o755)
            env["PATH"] = tmp + os.pathsep + env["PATH"]
            user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
            # the namespace's own sysfs: bmv2 reads its ports' state in /sys/class/net, which
            # would otherwise show the host's interfaces
            argv = ["unshare", *user, "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
                    "sh", "-c", 'mount -t sysfs sysfs /sys && ip link set lo up && exec "$@"',
                    "routerlab-engines-run", *command]
        else:
            argv = list(command)
        try:
            # isolated: unshare dies with this process, even killed (-9), and its namespaces'
            # init with it (--kill-child), and everything in them with that
            proc = subprocess.Popen(argv, env=env, cwd=cwd, preexec_fn=_killed_with_parent if isolated else None)
        except FileNotFoundError:
            raise RouterlabError(f"routerlab engines run: {argv[0]}: command not found") from None
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            if isolated:
                proc.kill()  # unshare waits out the signals it is sent; what it holds goes with it
            else:
                proc.send_signal(signal.SIGINT)
            proc.wait()
            raise
        return 128 - code if code < 0 else code  # killed by signal N: the shell's 128 + N
