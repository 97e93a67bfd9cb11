"""One process on a testbed host, started over SSH, that ends when its connection does.

``python -m routerlab.remote.hostrun [--state DIR] -- COMMAND...`` runs COMMAND in a session of
its own with this process's output, and notes its process group in ``DIR/<pid>.proc`` (so
that the host's agent or ``routerlab clean`` there ends it if all else fails). When its standard input ends
(the caller closed it, the SSH connection broke, the caller was killed) or it is sent
SIGTERM, SIGINT or SIGHUP, the command is sent SIGTERM, and SIGKILL after
:data:`GRACE_S`. It exits with the command's status.

Why a wrapper: SSH without a terminal sends no signal to a remote command when the client
goes away, and a terminal would mix the command's output streams. Closing standard input
is the one thing that reaches the host both when the caller stops a process on purpose
(:meth:`routerlab.remote.ssh.RemoteProcess.terminate`: the CPU-stop probe prints its results on
SIGTERM) and when it dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from routerlab import processes

#: Seconds between SIGTERM and SIGKILL.
GRACE_S = 5.0


def _stop(pid: int, done: threading.Event):
    processes.stop_group(pid, GRACE_S, gone=(ProcessLookupError,), until=done.wait)


def main(argv: list[str]) -> int:
    state = Path(argv[1]) if argv[:1] == ["--state"] and len(argv) > 1 else None
    cmd = argv[argv.index("--") + 1:] if "--" in argv else []
    if not cmd or (argv[0] != "--" and state is None):
        print("usage: python -m routerlab.remote.hostrun [--state DIR] -- COMMAND...", file=sys.stderr)
        return 2
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        print(f"routerlab.remote.hostrun: cannot run {cmd[0]}: {e.strerror}", file=sys.stderr)
        return 127
    note = None
    if state is not None:
        state.mkdir(parents=True, exist_ok=True)
        note = state / f"{p.pid}.proc"
        note.write_text(f"{p.pid}\n")
    done = threading.Event()
    stopping = threading.Lock()

    def stop(*_):
        if stopping.acquire(blocking=False):
            threading.Thread(target=_stop, args=(p.pid, done), daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)

    def watch_stdin():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while True:
        try:
            rc = p.wait()
            break
        except InterruptedError:  # pragma: no cover (PEP 475 retries)
            continue
    done.set()
    # what the command left in its group (a shell's children) goes with it
    processes.signal_group(p.pid, signal.SIGKILL)
    if note is not None:
        note.unlink(missing_ok=True)
        try:  # the last of the run's processes takes the folder with it
            state.rmdir()
        except OSError:
            pass
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
