"""The pipe between ``rt test --parallel`` and its worker processes: framed pickles, and what they carry.

Each message is a 4-byte little-endian length, one byte saying how it is encoded, and the message. Events
are the :mod:`rt.events` objects themselves (frozen attrs classes, already rendered: no exception or test
object crosses), so every reporter in the main process sees exactly what it would see in a one-process run.

The two events sent for every test (``TestStarted``, ``TestFinished``) go as tuples of plain values through
:mod:`marshal` and are rebuilt on arrival: pickling attrs instances costs about three times as much, which
on a suite of many small tests was most of what ``--parallel`` added per test. Everything else is pickled.
Both are safe here because both ends are the same interpreter and rt installation and the pipe is private to
the two processes (inherited file descriptors, never a socket).
"""

from __future__ import annotations

import marshal
import os
import pickle
import struct
from typing import Any

import attrs

from rt.events import Location, SnapshotCounts, TestFailure, TestFinished, TestStarted, TestStatus

_HEADER = struct.Struct("<I")
_MARSHAL, _PICKLE = b"M", b"P"


class Channel:
    """One end of a worker's two pipes: :meth:`send` writes to one, :meth:`recv` reads from the other.

    Reading takes whatever the pipe holds in one system call (up to :data:`_CHUNK`) and splits it into
    messages (:meth:`recv_many`): the main process's reader thread then wakes once per batch of a worker's
    events, not once per event."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._buffer = bytearray()
        self._error: Exception | None = None
        self._writer = os.fdopen(write_fd, "wb") if write_fd >= 0 else None

    def send(self, message: Any) -> None:
        assert self._writer is not None
        data = _encode(message)
        self._writer.write(_HEADER.pack(len(data)) + data)
        self._writer.flush()

    def recv(self) -> Any:
        """The next message; :class:`EOFError` when the other end is gone."""
        while True:
            message = self._take()
            if message is not _NOTHING:
                return message
            self._fill()

    def recv_many(self) -> list[Any]:
        """Every message the pipe holds (waiting for one at least); :class:`EOFError` when the other end is
        gone."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        found: list[Any] = []
        while not found:
            self._fill()
            try:
                while (message := self._take()) is not _NOTHING:
                    found.append(message)
            except Exception as exc:
                if not found:
                    raise
                self._error = exc  # the messages before it first; the next call raises it
        return found

    def _fill(self) -> None:
        if self._read_fd < 0:
            raise EOFError
        data = os.read(self._read_fd, _CHUNK)
        if not data:
            raise EOFError
        self._buffer += data

    def _take(self) -> Any:
        buffer = self._buffer
        if len(buffer) < _HEADER.size:
            return _NOTHING
        (size,) = _HEADER.unpack_from(buffer)
        end = _HEADER.size + size
        if len(buffer) < end:
            return _NOTHING
        data = bytes(buffer[_HEADER.size : end])
        del buffer[:end]
        return _decode(data)

    def close(self) -> None:
        if self._read_fd >= 0:
            try:
                os.close(self._read_fd)
            except OSError:
                pass
            self._read_fd = -1
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError:
                pass


_CHUNK = 1 << 16
_NOTHING = object()


def _encode(message: Any) -> bytes:
    if type(message) is tuple and message[0] == EVENT:
        event = message[1]
        kind = type(event)
        try:
            if kind is TestFinished:
                return _MARSHAL + marshal.dumps(_finished(event))
            if kind is TestStarted:
                return _MARSHAL + marshal.dumps(("S", event.file, event.path, event.attempt, event.run))
        except ValueError:  # a value marshal cannot carry (a subclass of str, say): pickled below
            pass
    return _PICKLE + pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(data: bytes) -> Any:
    if data[:1] == _MARSHAL:
        values = marshal.loads(data[1:])
        if values[0] == "S":
            return (EVENT, TestStarted(*values[1:]))
        return (EVENT, _finished_from(values))
    return pickle.loads(data[1:])


def _location(location: Location | None) -> tuple[str, int, int] | None:
    return None if location is None else (location.file, location.line, location.column)


def _location_from(values: tuple[str, int, int] | None) -> Location | None:
    return None if values is None else Location(*values)


def _failure(failure: TestFailure | None) -> tuple[Any, ...] | None:
    if failure is None:
        return None
    return (failure.message, failure.kind, failure.details, _location(failure.location), failure.timed_out)


def _failure_from(values: tuple[Any, ...] | None) -> TestFailure | None:
    if values is None:
        return None
    message, kind, details, location, timed_out = values
    return TestFailure(message, kind, details, _location_from(location), timed_out)


def _finished(e: TestFinished) -> tuple[Any, ...]:
    return (
        "F",
        e.file,
        e.path,
        e.status.value,
        e.duration,
        e.attempt,
        e.run,
        _failure(e.failure),
        _location(e.location),
        e.expect_calls,
        e.hook,
        e.output,
        e.reason,
        tuple(_failure(f) for f in e.earlier_failures),
        e.suite_lines,
        e.subtest_of,
        e.subtests_passed,
        e.properties,
        e.at_setup,
        e.counted,
        e.own_style,
    )


def _finished_from(v: tuple[Any, ...]) -> TestFinished:
    return TestFinished(
        v[1],
        v[2],
        TestStatus(v[3]),
        v[4],
        v[5],
        v[6],
        _failure_from(v[7]),
        _location_from(v[8]),
        v[9],
        v[10],
        v[11],
        v[12],
        tuple(f for f in map(_failure_from, v[13]) if f is not None),
        v[14],
        v[15],
        v[16],
        tuple(tuple(pair) for pair in v[17]),
        v[18],
        v[19],
        v[20],
    )


@attrs.frozen
class WorkerSetup:
    """The first message to a worker: everything a one-process run knows after parsing the command line."""

    options: Any  # RunOptions (validated by the main process; the worker does not parse the command line)
    files: tuple[Any, ...]  # every TestFile of the run, in the run's order: the worker collects them all
    backend: str
    backend_override: str | None  # the main process's --backend, so the worker's kernel reads the same
    snapshot_update: bool
    snapshot_ci: bool
    snapshot_full_run: bool
    coverage: Any = None  # CoverageOptions, or None
    coverage_file: str | None = None  # where the worker saves its coverage data (combined by the main one)
    #: the run's temporary folder, taken by the main process: each worker's is ``popen-gw{N}`` in it
    temp_folder: str | None = None


@attrs.frozen
class FileDone:
    """Sent with a file's ``FileFinished``: what the main process cannot rebuild from the events alone."""

    filtered_out: int = 0  # tests -t / -k / -m left out in this file
    snapshots: SnapshotCounts = attrs.Factory(SnapshotCounts)  # this file's snapshot counts
    obsolete: tuple[str, ...] = ()  # the obsolete snapshots' names, for the list after the summary
    interrupted: bool = False  # KeyboardInterrupt or pytest.exit() in this file: the run stops
    reruns: int = 0  # attempts of this file's pytest-style tests run again (pytest-rerunfailures' ` N rerun`)
    #: this file's reports of plugins' own categories (pytest-retry's ``retried``), by category
    categories: tuple[tuple[str, int], ...] = ()
    #: a pytest-style file failed to collect, so the worker ran no test (only the collection errors are
    #: reported): the run ends as pytest's does, "Interrupted: N errors during collection"
    collection_stopped: bool = False
    exit_code: int | None = None  # pytest.exit(msg, returncode=N)'s N
    interrupt_reason: str | None = None  # pytest.exit(msg)'s "_pytest.outcomes.Exit: msg"
    subtests_passed: int = 0  # this file's subtests that passed (pytest 9's ` N subtests passed`)
    warnings: int = 0  # warnings recorded around the tests since the last file
    #: those warnings' locations and texts (pywarnings.listed)
    warning_list: tuple[tuple[str, str], ...] = ()
    #: ``record_testsuite_property`` pairs recorded since the last file
    testsuite_properties: tuple[tuple[str, str], ...] = ()
    #: warnings recorded while collecting the run's files (every worker collects them all): sent once
    collection_warnings: int | None = None
    #: the collection's warnings' locations and texts, sent with ``collection_warnings``
    collection_warning_list: tuple[tuple[str, str], ...] = ()
    #: the file was not collected (a conftest.py's ``collect_ignore``): the main process does not show it
    not_collected: bool = False
    #: the file's test reports, serialized as pytest's (report_replay.py), when the plugins read them
    reports: tuple[dict[str, Any], ...] = ()


# message kinds, worker to main
COLLECTING = "collecting"  # (COLLECTING, file as shown): it imports that test file (before its first file)
READY = "ready"  # (READY, wants results): it has collected the run's files and takes its first file
EVENT = "event"  # (EVENT, TestEvent): FileStarted, TestStarted, TestFinished (and events outside a file)
FILE = "file"  # (FILE, FileFinished, FileDone)
ECHO = "echo"  # (ECHO, stdout text, stderr text): an rt-style test's captured output, printed in turn
DONE = "done"  # (DONE, hook exit status): the worker finished its session (teardown done, coverage saved)
#: and exits; the status a session-end hook set (session.exitstatus) in the worker that ended the session, else None
#: (COLLECTED, forkable, parts, turns, threads): the zygote collected the run; whether workers may be forked from
#: it, the files that may run in parts (Runner.parts: file index -> selected tests per top-level child), the
#: session's order when a hook set one across files (Runner.worker_turns: (file index, node ids or None), else
#: None), and the threads that keep it from forking (worker.running_threads; "" when it can fork)
COLLECTED = "collected"
# main to worker
#: (RUN, index into WorkerSetup.files), (RUN, index, start, stop): some of its tests (FilePart), or (RUN, index,
#: node ids, first): a turn of the session's order, its file's first or not (Runner.segment)
RUN = "run"
STOP = "stop"  # (STOP,): no more files; (STOP, results, reports, warnings): and it ends the session with the
#: run's results, the other workers' serialized test reports and the run's warnings (collection's, tests')
