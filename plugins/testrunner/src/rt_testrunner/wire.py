"""The pipe between ``rt test --parallel`` and its worker processes: framed pickles, and what they carry.

Each message is a 4-byte little-endian length and a pickle. Pickle is safe here because both ends are the
same rt installation and the pipe is private to the two processes (inherited file descriptors, never a
socket). Events are the :mod:`rt.events` objects themselves (frozen attrs classes, already rendered: no
exception or test object crosses), so every reporter in the main process sees exactly what it would see in
a one-process run.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

import attrs

from rt.events import SnapshotCounts

_HEADER = struct.Struct("<I")


class Channel:
    """One end of a worker's two pipes: :meth:`send` writes to one, :meth:`recv` reads from the other."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._reader = os.fdopen(read_fd, "rb") if read_fd >= 0 else None
        self._writer = os.fdopen(write_fd, "wb") if write_fd >= 0 else None

    def send(self, message: Any) -> None:
        assert self._writer is not None
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._writer.write(_HEADER.pack(len(data)) + data)
        self._writer.flush()

    def recv(self) -> Any:
        """The next message; :class:`EOFError` when the other end is gone."""
        assert self._reader is not None
        header = self._reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise EOFError
        (size,) = _HEADER.unpack(header)
        data = self._reader.read(size)
        if len(data) < size:
            raise EOFError
        return pickle.loads(data)

    def close(self) -> None:
        for stream in (self._reader, self._writer):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


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


@attrs.frozen
class FileDone:
    """Sent with a file's ``FileFinished``: what the main process cannot rebuild from the events alone."""

    filtered_out: int = 0  # tests -t / -k / -m left out in this file
    snapshots: SnapshotCounts = attrs.Factory(SnapshotCounts)  # this file's snapshot counts
    obsolete: tuple[str, ...] = ()  # the obsolete snapshots' names, for the list after the summary
    interrupted: bool = False  # KeyboardInterrupt or pytest.exit() in this file: the run stops


# message kinds, worker to main
COLLECTING = "collecting"  # (COLLECTING, file as shown): it imports that test file (before its first file)
READY = "ready"  # (READY,): it has collected the run's files and takes its first file
EVENT = "event"  # (EVENT, TestEvent): FileStarted, TestStarted, TestFinished (and events outside a file)
FILE = "file"  # (FILE, FileFinished, FileDone)
ECHO = "echo"  # (ECHO, stdout text, stderr text): an rt-style test's captured output, printed in turn
DONE = "done"  # (DONE,): the worker finished its session (teardown done, coverage saved) and exits
# main to worker
RUN = "run"  # (RUN, index into WorkerSetup.files)
STOP = "stop"  # (STOP,): no more files
