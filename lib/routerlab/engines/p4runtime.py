"""P4Runtime, the control plane of ``simple_switch_grpc``: its pipeline set, table entries
written and counters read back through finsy (a maintained P4Runtime client from PyPI).

Why finsy: it is kept current with protobuf and grpcio (PyPI's ``p4runtime`` package,
generated for protobuf 3, does not import with protobuf 4 or later), it ships the
P4Runtime protos of its own (so nothing from p4lang/PI is imported here), and it turns
names and Python values into P4Runtime messages from the P4Info. It is asyncio-based;
:class:`Session` runs its event loop in a thread of its own so that the engines, which
are synchronous, can call it.

Every entry is checked against the program's P4Info before the first Write
(:func:`routerlab.engines.p4.parse_entries`); what the switch still refuses is named by
the entry's index in its file.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path
from typing import Callable

from routerlab.errors import NotAnswering, NotStarted, RouterlabError
from routerlab.engines.p4 import Entry
from routerlab.progress import Progress, silent, Step

#: Updates per WriteRequest: large enough that the round trips do not count, small
#: enough that an error names its entry without a huge reply.
BATCH = 2000
#: How long simple_switch_grpc has to answer the first connection, in seconds.
CONNECT_TIMEOUT_S = 30.0


class _Said(logging.Handler):
    """What finsy logged at ERROR or above: the reason behind an error it raises without
    one (a pipeline the switch refused cancels finsy's connection)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage().splitlines()[0][:300] if record.getMessage() else record.levelname)


_SAID = _Said()


def _finsy():
    import finsy

    # finsy logs each connection at INFO and that bmv2 has no gNMI at WARNING: routerlab
    # says what matters itself, and raises on errors, with what finsy said then
    log = logging.getLogger("finsy")
    if _SAID not in log.handlers:
        log.setLevel(logging.ERROR)
        log.addHandler(_SAID)
        log.propagate = False
    return finsy


def table_entry(e: Entry):
    """``e`` as a finsy table entry: an insert, or for a default action a modify (the
    P4Runtime way to set a table's default). Wildcard fields are left out, as P4Runtime
    requires."""
    fy = _finsy()
    match = {}
    for m in e.key:
        if m.wildcard:
            continue
        kind, v = m.field.match_type, m.values
        match[m.field.name] = v[0] if kind in ("exact", "optional") else (v[0], v[1])
    entry = fy.P4TableEntry(e.table, match=fy.P4TableMatch(match) if match else None,
                            action=fy.P4TableAction(e.action, **{n: v for n, v, _ in e.params}),
                            priority=e.priority or 0, is_default_action=e.default)
    return ~entry if e.default else +entry


class Session:
    """A P4Runtime client, primary controller of the switch at ``address`` (``host:port``
    or ``unix:PATH``), that has set the pipeline (``p4info``, ``bmv2_json``). Close it
    with :meth:`close` (or use it as a context manager).

    Raises :class:`NotAnswering` (naming the address and ``log``, the switch's log) when
    the switch does not answer within ``timeout`` seconds, or ``alive()`` says it is
    gone; :class:`~routerlab.errors.NotStarted` when finsy cannot read the P4Info or the
    switch refuses the pipeline (the program is the cause)."""

    def __init__(self, address: str, p4info: Path, bmv2_json: Path, *, device_id: int = 0,
                 timeout: float = CONNECT_TIMEOUT_S, log: Path | None = None,
                 alive: Callable[[], bool] = lambda: True):
        fy = _finsy()
        self.address, self.log = address, log
        options = fy.SwitchOptions(p4info=Path(p4info), p4blob=Path(bmv2_json), p4force=True, device_id=device_id)
        try:
            self._switch = fy.Switch("bmv2", address, options)
        except (ValueError, KeyError, OSError) as e:
            # e.g. two match fields of one table whose names end alike (hdr.ethernet.dstAddr
            # and hdr.ipv4.dstAddr): finsy names fields by their last part
            raise NotStarted(f"{p4info}: the P4Runtime client (finsy) cannot take this P4Info: {_said(e)}; "
                             "bmv2's Thrift control plane can (routerlab measure --control thrift)") from None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"p4runtime {address}", daemon=True)
        self._thread.start()
        try:
            self._call(self._open(timeout, alive), timeout + 10)
        except BaseException:
            self._stop_loop()
            raise

    async def _open(self, timeout: float, alive: Callable[[], bool]):
        deadline = time.monotonic() + timeout
        last = None
        start = len(_SAID.lines)
        # simple_switch_grpc listens only once it has started: try until the deadline
        while time.monotonic() < deadline and alive():
            try:
                await asyncio.wait_for(self._switch.__aenter__(), max(0.1, deadline - time.monotonic()))
                return
            except asyncio.TimeoutError:
                break
            except asyncio.CancelledError:
                # finsy cancels its connection when the switch refuses the pipeline
                if asyncio.current_task().cancelling():
                    raise
                said = "; ".join(_SAID.lines[start:]) or "no reason given"
                raise NotStarted(f"P4Runtime at {self.address}: the switch did not take the pipeline: {said}"
                                 + (f"; its log: {self.log}" if self.log else "")) from None
            except Exception as e:  # noqa: BLE001 - finsy's errors differ by version
                last = e
                if "UNAVAILABLE" not in str(e) and "failed to connect" not in str(e).lower():
                    raise RouterlabError(f"P4Runtime at {self.address}: {_said(e)}") from None
                await asyncio.sleep(0.2)
        gone = "" if alive() else " (it exited)"
        raise NotAnswering(f"simple_switch_grpc did not answer P4Runtime at {self.address}"
                           + (gone or f" within {timeout:.0f} s") + (f" ({_said(last)})" if last and not gone else "")
                           + (f"; its log: {self.log}" if self.log else ""))

    def _call(self, coro, timeout: float | None = None):
        import concurrent.futures

        try:
            return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)
        except concurrent.futures.TimeoutError:
            raise RouterlabError(f"P4Runtime at {self.address}: no answer within {timeout:.0f} s"
                                 + (f"; the switch's log: {self.log}" if self.log else "")) from None

    def write(self, entries: list[Entry], source: str = "entries",
              progress: Progress = silent) -> int:
        """Write ``entries`` (already checked, :func:`routerlab.engines.p4.parse_entries`),
        :data:`BATCH` to a WriteRequest; return how many. ``progress`` is told the number
        written so far, of all. A refused entry raises :class:`~routerlab.errors.NotStarted`
        naming it (``table_entries[i]`` of ``source``) and what the switch said: the program
        does not take it."""
        fy = _finsy()
        done = 0
        for start in range(0, len(entries), BATCH):
            batch = entries[start:start + BATCH]
            updates = [table_entry(e) for e in batch]
            try:
                self._call(self._switch.write(updates))
            except fy.P4ClientError as ex:
                raise NotStarted(_refused(ex, start, batch, source)) from None
            done += len(batch)
            progress(Step("table entries", done, len(entries)))
        return done

    def counters(self, reads: list[tuple[str, int]]) -> list[int]:
        """The packet count of each ``(counter, index)`` in ``reads``, in one ReadRequest."""
        fy = _finsy()
        if not reads:
            return []

        async def read():
            got = {}
            async for c in self._switch.read([fy.P4CounterEntry(name, index=i) for name, i in reads]):
                if c.data is None:  # bmv2 answers an index past the counter's end with no data
                    continue
                got[(self._switch.p4info.counters[c.counter_id].alias, c.index)] = c.data.packet_count
                got[(self._switch.p4info.counters[c.counter_id].name, c.index)] = c.data.packet_count
            return got
        try:
            got = self._call(read(), 120)
        except fy.P4ClientError as ex:
            raise RouterlabError(f"P4Runtime at {self.address}: reading counters: {_said(ex)}") from None
        missing = [r for r in reads if r not in got]
        if missing:
            raise RouterlabError(f"P4Runtime at {self.address}: no counter {missing[0][0]}[{missing[0][1]}] in the reply")
        return [got[r] for r in reads]

    def counter(self, name: str, index: int) -> int:
        """Packets of counter ``name`` (as the P4Info names it) at ``index``."""
        return self.counters([(name, index)])[0]

    def close(self) -> None:
        """Leave the switch (its pipeline and entries stay) and stop the client's loop."""
        if self._loop.is_closed():
            return
        try:
            self._call(self._switch.__aexit__(None, None, None), 10)
        except Exception:  # noqa: BLE001 - the switch may be gone already
            pass
        self._stop_loop()

    def _stop_loop(self):
        async def cancel_the_rest():
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in rest:
                t.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
        try:
            asyncio.run_coroutine_threadsafe(cancel_the_rest(), self._loop).result(5)
        except Exception:  # noqa: BLE001 - stopping anyway
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _said(e: BaseException) -> str:
    """The first line of what gRPC or finsy said."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:300]


def _refused(ex, start: int, batch: list[Entry], source: str) -> str:
    """What the switch refused, by entry: ``table_entries[i]`` of ``source`` and why."""
    details = getattr(ex, "details", None) or {}
    for index, detail in sorted(details.items()):
        e = batch[index] if 0 <= index < len(batch) else None
        where = f"table_entries[{e.index}] ({e.table} {e.action})" if e else f"update {start + index}"
        msg = getattr(detail, "message", None) or str(detail)
        return f"{source}: {where}: the switch refused it: {msg}"
    first, last = batch[0].index, batch[-1].index
    return f"{source}: table_entries[{first}..{last}]: the switch refused a write: {_said(ex)}"
