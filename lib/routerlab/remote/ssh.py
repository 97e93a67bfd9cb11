"""Commands on a testbed host over SSH: OpenSSH's client, one shared connection per host.

Why OpenSSH's own client rather than a Python library (asyncssh, paramiko): it honours
the user's SSH configuration as it is (``~/.ssh/config``, ProxyJump, agents, certificates,
``known_hosts``) with nothing to translate, it is in every distribution, and connection
sharing (``ControlMaster``) makes a command on an open connection cost a few
milliseconds, which a trial's start needs.

Every connection is made with ``BatchMode=yes`` (never a password or passphrase prompt)
and ``StrictHostKeyChecking=yes`` (a host whose key is not in ``known_hosts`` is refused,
never added). Every remote command is an argv joined with :func:`shlex.join`, so that no
name from a testbed file reaches the remote shell as anything but one word.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import time
from pathlib import Path

from routerlab import processes
from routerlab.errors import SshError
from routerlab.remote.testbedfile import Host

#: How long the first connection to a host may take, seconds.
CONNECT_TIMEOUT_S = 20


#: In a child before it runs ssh: SIGTERM when the process that started it ends, so that a
#: killed measurement leaves no connection open.
_dies_with_parent = processes.dies_with_parent(signal.SIGTERM)


class RemoteProcess(subprocess.Popen):
    """A process on a host, run through :mod:`routerlab.remote.hostrun`: :meth:`terminate` closes
    its standard input, which the host turns into SIGTERM of the command (what the
    command prints on its way out still comes back); :meth:`kill` does that and ends the
    local SSH client too. Its standard input is not :attr:`stdin`, so that
    :meth:`communicate` leaves it open."""

    def __init__(self, *args, **kw):
        super().__init__(*args, stdin=subprocess.PIPE, **kw)
        self._line, self.stdin = self.stdin, None

    def terminate(self):
        if not self._line.closed:
            try:
                self._line.close()
            except OSError:
                pass

    def kill(self):
        self.terminate()
        super().kill()


class Connection:
    """One host's shared SSH connection (a ``ControlMaster``), opened by :meth:`open`."""

    def __init__(self, host: Host, control_dir: Path, ssh_config: Path | None = None):
        self.host = host
        self.control_dir = Path(control_dir)
        self.ssh_config = ssh_config
        self._master: subprocess.Popen | None = None

    @property
    def control_path(self) -> Path:
        return self.control_dir / f"{self.host.name}.sock"

    def options(self) -> list[str]:
        opts = ["-F", str(self.ssh_config)] if self.ssh_config else []
        if self.host.port:
            opts += ["-p", str(self.host.port)]
        return opts + ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "ServerAliveInterval=5",
                       "-o", "ServerAliveCountMax=3", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                       "-o", f"ControlPath={self.control_path}"]

    def remote(self, argv: list[str]) -> str:
        """The command line the host's shell is given: ``argv`` quoted word by word, after
        the host's variables (its ``env`` in the testbed file)."""
        pre = ["env", *[f"{k}={v}" for k, v in self.host.env]] if self.host.env else []
        return shlex.join(pre + list(argv))

    def argv(self, argv: list[str]) -> list[str]:
        """The local argv that runs ``argv`` on the host through the shared connection."""
        return ["ssh", *self.options(), "-o", "ControlMaster=no", "-T", "--", self.host.destination,
                self.remote(argv)]

    def open(self):
        """Open the shared connection; an :class:`SshError` says why it could not be
        (naming the host and ssh's own words: refused, unknown host key, no key...)."""
        self.control_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.control_path.unlink(missing_ok=True)
        self._master = subprocess.Popen(["ssh", *self.options(), "-o", "ControlMaster=yes", "-o", "ControlPersist=no",
                                         "-N", "-T", "--", self.host.destination],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, start_new_session=True, preexec_fn=_dies_with_parent)
        deadline = time.monotonic() + CONNECT_TIMEOUT_S + 5
        while time.monotonic() < deadline:
            if self._master.poll() is not None:
                err = self._master.stderr.read().strip()
                rc, self._master = self._master.returncode, None
                raise SshError(f"host {self.host.name} ({self.host.ssh}): ssh could not connect: "
                               f"{err.splitlines()[-1] if err else 'exit ' + str(rc)}")
            if self.control_path.exists() and subprocess.run(
                    ["ssh", *self.options(), "-O", "check", "--", self.host.destination],
                    capture_output=True).returncode == 0:
                return self
            time.sleep(0.05)
        self.close()
        raise SshError(f"host {self.host.name} ({self.host.ssh}): no SSH connection within {CONNECT_TIMEOUT_S + 5} s")

    def run(self, argv: list[str], input: str | None = None, check: bool = True, timeout: float = 120) -> str:
        """Run ``argv`` on the host; its standard output, or an :class:`SshError` naming
        the host, the command and its error output."""
        try:
            p = subprocess.run(self.argv(argv), input=input, capture_output=True,
                               text=True, timeout=timeout, stdin=subprocess.DEVNULL if input is None else None)
        except subprocess.TimeoutExpired:
            raise SshError(f"host {self.host.name}: {shlex.join(argv)[:200]}: no answer within {timeout:g} s") from None
        if check and p.returncode != 0:
            err = p.stderr.strip() or p.stdout.strip()
            raise SshError(f"host {self.host.name}: {shlex.join(argv)[:200]}: {err or 'exit ' + str(p.returncode)}")
        return p.stdout

    def popen(self, argv: list[str], **kw) -> subprocess.Popen:
        """Start ``argv`` on the host, its standard streams those of the local process."""
        return subprocess.Popen(self.argv(argv), start_new_session=True, **kw)

    def spawn(self, argv: list[str], state_dir: str | None, **kw) -> RemoteProcess:
        """Start ``argv`` on the host under :mod:`routerlab.remote.hostrun` (it ends when its
        standard input does), noted in the host's ``state_dir`` if one is given."""
        kw.pop("stdin", None)
        note = ["--state", state_dir] if state_dir else []
        return RemoteProcess(self.argv([self.host.python, "-m", "routerlab.remote.hostrun", *note, "--", *argv]),
                             start_new_session=True, **kw)

    def put(self, local: Path, remote: str, timeout: float = 600):
        """Copy the file ``local`` to the path ``remote`` on the host (through the shared
        connection: ``cat``, so no scp or sftp subsystem is needed there)."""
        with open(local, "rb") as fh:
            p = subprocess.run(self.argv(["sh", "-c", 'cat > "$1"', "sh", remote]), stdin=fh, capture_output=True,
                               timeout=timeout)
        if p.returncode != 0:
            raise SshError(f"host {self.host.name}: copying {local} to {remote}: "
                           f"{p.stderr.decode(errors='replace').strip() or 'exit ' + str(p.returncode)}")

    def close(self):
        """Close the shared connection (idempotent)."""
        m, self._master = self._master, None
        if m is None:
            return
        subprocess.run(["ssh", *self.options(), "-O", "exit", "--", self.host.destination], capture_output=True,
                       timeout=10)
        processes.reap(m, 5)
        self.control_path.unlink(missing_ok=True)

