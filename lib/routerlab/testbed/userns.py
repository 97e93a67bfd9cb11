"""A testbed of one's own: user, network, mount and PID namespaces, for checks without root.

A user with no sudo may still make a user namespace in which it is root, and network
namespaces owned by it: namespaces, veth pairs, addresses, nftables and processes in them
all work there, as on the machine's own testbed. What does not is what reaches beyond
them: pinning the kernel's receive work to a CPU (RPS, NAPI threads), moving kernel
threads, BPF programs. So the course's checks, which look at where packets go and not at
how fast, run there (:class:`routerlab.testbed.namespaces.NamespaceTestbed` with ``placement=False``), and
measurements stay with root.

:func:`call` runs a function of routerlab in a child process inside such namespaces,
made with util-linux's ``unshare``::

    setpriv --pdeathsig KILL  unshare --user --map-root-user --net --mount --pid --fork --mount-proc --kill-child

and returns what the function returned. The child mounts a tmpfs of its own on ``/run``
(where ``ip netns`` keeps its namespaces and the testbed its state), so nothing of it
shows, or stays, outside. Nothing is left behind however it ends: the namespaces belong
to the child's mount and PID namespaces, and when the child's first process ends, by
itself, by Ctrl-C (passed on, so the testbed comes down as it does as root) or by a kill
of the parent, the kernel ends every process in them and frees the namespaces.
"""

from __future__ import annotations

import functools
import importlib
import os
import pickle
import shutil
import signal
import subprocess
import sys
import traceback
from pathlib import Path

from routerlab import errors, processes
from routerlab.errors import NeedsRoot, ParameterError, RouterlabError

#: The command that makes the namespaces: the parent's death kills ``unshare``, whose
#: death kills the child, the PID namespace's first process, whose death ends the rest.
UNSHARE = ["setpriv", "--pdeathsig", "KILL", "unshare", "--user", "--map-root-user", "--net", "--mount",
           "--pid", "--fork", "--mount-proc", "--kill-child"]

#: What a container must be started with so that a user in it can make these namespaces,
#: per container engine. Both hide parts of /proc and /sys by mounts over them, and the
#: kernel refuses a new /proc (``--mount-proc``) under a user namespace while any are
#: hidden: ``systempaths=unconfined`` leaves them visible (read-only still). Docker's
#: default seccomp profile also refuses ``unshare`` to a process without CAP_SYS_ADMIN
#: (moby/moby#42441), and its AppArmor profile refuses ``mount``; Podman's allows both.
#: No capability is added: the user in the container stays unprivileged.
CONTAINER_OPTIONS = {
    "podman": ("--security-opt", "systempaths=unconfined"),
    "docker": ("--security-opt", "systempaths=unconfined", "--security-opt", "seccomp=unconfined",
               "--security-opt", "apparmor=unconfined"),
}


def container() -> str | None:
    """The container engine this process runs under ("podman", "docker"), from the files
    each puts in its containers, or None outside a container."""
    if Path("/run/.containerenv").exists():
        return "podman"
    if Path("/.dockerenv").exists():
        return "docker"
    return None


#: Seconds a child is given to take its testbed down after Ctrl-C before it is killed
#: (which still leaves nothing: see the module's text).
GRACE_S = 30.0


def inside() -> bool:
    """Whether this process runs in a user namespace other than the machine's own (the
    initial one maps every uid to itself)."""
    try:
        lines = Path("/proc/self/uid_map").read_text().split("\n")
    except OSError:
        return False
    return [x.split() for x in lines if x.strip()] != [["0", "0", "4294967295"]]


def wanted(asked: bool | None) -> bool:
    """Whether to run in namespaces of one's own: as ``asked``, or, with None, when this
    process is not root."""
    return asked if asked is not None else os.geteuid() != 0


@functools.cache
def missing() -> str | None:
    """Why a user namespace of one's own cannot be made here, in one line naming what
    to change; None when it can (asked of the kernel once per process)."""
    for tool in ("unshare", "setpriv"):
        if not shutil.which(tool):
            return f"'{tool}' (util-linux) is not installed"
    try:
        p = subprocess.run(UNSHARE + ["true"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare could not run: {e}"
    if p.returncode == 0:
        return None
    why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit status {p.returncode}"
    for knob in ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                 "/proc/sys/kernel/unprivileged_userns_clone"):
        try:
            value = Path(knob).read_text().strip()
        except OSError:
            continue
        if (knob.endswith("restrict_unprivileged_userns") and value == "1") or (
                knob.endswith("userns_clone") and value == "0"):
            name = knob.removeprefix("/proc/sys/").replace("/", ".")
            why += f" ({name} is {value}: the machine's administrator sets it)"
    engine = container()
    if engine:
        return (f"this container refuses user namespaces to its users ({why}): start it with "
                f"{' '.join(CONTAINER_OPTIONS[engine])}")
    return f"this machine refuses user namespaces to users: {why}"


#: Where root's tools are (ip, ethtool, nft, sysctl): a user's PATH lacks them on Debian.
SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def root_path() -> str:
    """This process's PATH with root's tool folders (:data:`SBIN`) added where missing: the
    child is root in its namespaces and runs root's tools by name."""
    path = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p]
    return os.pathsep.join(path + [d for d in SBIN if d not in path])


def call(function: str, *args, **kwargs):
    """``module:name`` of routerlab (e.g. ``"routerlab.course.p4exercises:check"``) called with
    ``args`` and ``kwargs`` in a child inside user, network, mount and PID namespaces of
    its own (see the module's text), where it is root; returns what it returned. The
    child's output goes where this process's does. A :class:`RouterlabError` in the child
    is raised here with its message; Ctrl-C here is passed on to the child, which takes
    its testbed down, and then raised here as :class:`KeyboardInterrupt`.

    Raises :class:`NeedsRoot` when the namespaces cannot be made (:func:`missing`), and
    :class:`ParameterError` for a path under ``/run``, which the child's own ``/run``
    hides."""
    for name, value in [*((f"argument {i + 1}", a) for i, a in enumerate(args)), *kwargs.items()]:
        if isinstance(value, str) and (value == "/run" or value.startswith("/run/")):
            raise ParameterError(name, f"{value} is under /run, which a user namespace's own /run hides: "
                                 "name a file elsewhere")
    why = missing()
    if why:
        # in a container, root is no way round: the options are what it lacks
        raise NeedsRoot(why if container() else f"{why}; without a user namespace this needs root")
    request = pickle.dumps((function, args, kwargs))
    asked, ask = os.pipe()  # the request, on a pipe of its own: stdin stays the user's
    read, write = os.pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), PATH=root_path())
    try:
        proc = subprocess.Popen(UNSHARE + [sys.executable, "-m", "routerlab.testbed.userns", str(asked), str(write)],
                                pass_fds=(asked, write), env=env, start_new_session=True)
    finally:
        os.close(asked)
        os.close(write)
    try:
        try:
            with os.fdopen(ask, "wb") as f:
                f.write(request)
        except BrokenPipeError:  # the child ended before reading it: said below
            pass
        with os.fdopen(read, "rb") as f:
            answer = f.read()
        proc.wait()
    except BaseException:
        _interrupt(proc)
        raise
    if proc.returncode == 130:
        raise KeyboardInterrupt
    if not answer:
        raise RouterlabError(f"the child in a user namespace ended (exit status {proc.returncode}) "
                             f"without an answer from {function}")
    kind, value = pickle.loads(answer)
    if kind == "error":  # of its own class (a RouterlabError), with its message
        raise errors.rebuilt_error(value)
    return value


def _interrupt(proc: subprocess.Popen):
    """Ctrl-C for the child (its testbed comes down), then a kill if it is not gone
    within :data:`GRACE_S`."""
    try:
        processes.stop_group(proc.pid, GRACE_S, first=signal.SIGINT, gone=(ProcessLookupError,),
                             until=processes.ended_within(proc))
    finally:
        proc.wait()


def _child(asked: int, fd: int) -> int:
    """The child's side of :func:`call`: the request read from ``asked``, its own
    ``/run``, then the call; the answer is pickled to ``fd``."""
    def interrupted(signum, frame):
        raise KeyboardInterrupt

    # the PID namespace's first process gets only the signals it handles
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    with os.fdopen(asked, "rb") as f:
        function, args, kwargs = pickle.loads(f.read())
    with os.fdopen(fd, "wb") as out:
        try:
            subprocess.run(["mount", "--make-rprivate", "/"], check=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755", "routerlab", "/run"], check=True)
            module, name = function.split(":")
            answer = ("ok", getattr(importlib.import_module(module), name)(*args, **kwargs))
        except KeyboardInterrupt:
            return 130
        except RouterlabError as e:
            answer = ("error", errors.error_record(e))
        except subprocess.CalledProcessError as e:
            answer = ("error", errors.error_record(
                RouterlabError(f"the user namespace could not be set up: {' '.join(e.cmd)} failed")))
        except Exception as e:  # a bug: its traceback where the user sees it, its name here
            traceback.print_exc()
            answer = ("error", errors.error_record(RouterlabError(
                f"{function} failed in its user namespace: {type(e).__name__}: {e} (traceback above)")))
        out.write(pickle.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1]), int(sys.argv[2])))
