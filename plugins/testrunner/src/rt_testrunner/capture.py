"""Per-test output capture: ``sys.stdout``/``sys.stderr`` and logging, routed to the running test's buffer.

pytest's default ``--capture=fd`` also takes what reaches file descriptors 1 and 2 (a subprocess, C code,
``os.write``): while one test runs alone, they point at temporary files of the process, whose content joins
the test's output at the end of each phase, and the terminal is written through copies of the descriptors.
``--capture=sys`` leaves the descriptors alone, ``--capture=tee-sys`` also shows what the tests write.

The streams are replaced once per run by routers that write to the buffer of the test running in the current
context (a context variable), so tests running concurrently in the event loop each keep their own output,
and output outside any test goes to the terminal. ``-s``/``--no-capture`` leaves the streams alone.

Logging is captured by a handler on the root logger, added once ``logging`` is imported: at :func:`install`
when it already is, else when the first test starts after a suite imported it (its test modules and
conftest.py files are imported before any test runs). rt itself does not import ``logging`` on a plain run:
it was 10 million instructions of an empty run's start-up (about 470 million; docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any, Protocol, TextIO

import attrs

from rt_testrunner.real_os import RealOs

#: held while a test's stream file is made (:meth:`Capture.fileno`)
_FILES_LOCK = threading.Lock()
#: the raw file class over a descriptor, as it was when rt started (a test may patch ``io`` or ``open``)
_FILE_IO = io.FileIO

LOG_FORMAT = "%(levelname)-8s %(name)s:%(filename)s:%(lineno)d %(message)s"


class FixtureStreams(Protocol):
    """A test's ``capsys``/``capsysbinary``/``capteesys``/``capfd``/``capfdbinary`` while it is set up: what
    the test writes to ``sys.stdout``/``sys.stderr`` as they are now goes there, not into the test's own
    captured output (:class:`_FixtureRouter`)."""

    #: ``capteesys``: what it takes goes on to the test's captured output as well
    tee: bool

    def write(self, which: str, text: str) -> None: ...

    def fileno(self, which: str) -> int: ...

    def seek(self, which: str, offset: int, whence: int) -> int: ...

    def read(self, which: str, size: int | None) -> str: ...

    def truncate(self, which: str, size: int | None) -> int: ...

    def push(self) -> None:
        """What the test wrote and has not read yet joins its captured output (the phase ends), as pytest's
        fixture does when it closes after each phase."""


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.define(eq=False)
class Capture:
    """What one test wrote."""

    out: list[str] = attrs.Factory(list)
    err: list[str] = attrs.Factory(list)
    log: list[str] = attrs.Factory(list)
    #: the temporary files behind ``sys.stdout.fileno()``/``sys.stderr.fileno()`` once the test asked for one
    files: dict[str, Any] = attrs.Factory(dict)
    #: the test's ``capsys`` or ``capfd`` while it is set up
    fixture: FixtureStreams | None = None
    #: made by ``capsys``/``capfd`` for a test whose output is not captured (``-s``): only the fixture takes
    #: output, everything else goes to the terminal, as pytest's ``--capture=no`` has no global capture
    passthrough: bool = False

    def fileno(self, which: str) -> int:
        """A real file descriptor for stream ``which`` (``"out"``, ``"err"``), as pytest's default capture
        gives (its ``sys.stdout`` is a temporary file): a test may hand it to code that writes to it or
        redirects it (``os.dup2``, the ``capturer`` package). From then on the test's writes to that stream go
        to the file, so they land wherever the descriptor points; what the file holds joins the test's output
        when it ends (:meth:`drain`). Threads of the test may ask at the same time (tqdm's bars in a thread
        pool each probe the terminal): one file is made, under a lock, and the others get it too; a second
        file would replace the first, which then leaks (an unclosed-file ``ResourceWarning``)."""
        descriptor = getattr(self.out if which == "out" else self.err, "fd", None)
        if descriptor is not None:  # capfd's: the descriptor it redirected to its file
            return int(descriptor)
        with _FILES_LOCK:
            found = self.files.get(which)
            if found is None:
                # made with the real descriptor functions: the test may have patched ``os.open`` (celery
                # 5.7.0's DaemonContext test asks for ``sys.stdout.fileno()`` under a mocked one)
                found = self.files[which] = _FILE_IO(_temporary_descriptor(), "r+")
            return int(found.fileno())

    def drain(self) -> None:
        """Move what the files hold into the test's output, and close them."""
        self.settle()
        files, self.files = self.files, {}
        for which, file in files.items():
            file.seek(0)
            data = file.read()
            file.close()
            if data:
                (self.out if which == "out" else self.err).append(data.decode("utf-8", "replace"))

    #: where each phase of a pytest test (setup, call, teardown) starts in ``out``, ``err`` and ``log``
    phases: list[tuple[str, int, int, int]] = attrs.Factory(list)
    #: where ``sys.stdout.read()`` (``sys.stderr.read()``) goes on in the phase's output after a ``seek``;
    #: absent: at the end, where writes append (capture_file.py)
    positions: dict[str, int] = attrs.Factory(dict)
    #: per stream, the running length of the phase's output: ``(phase start, pieces counted, their length)``,
    #: so ``tell()`` after each print counts the new pieces only, not the whole output again
    lengths: dict[str, tuple[int, int, int]] = attrs.field(factory=dict, init=False)
    #: per stream writing over its phase's output after a ``seek``: what follows its position
    #: (capture_file.write_at); the output is whole again once :meth:`settle` joins it
    tails: dict[str, tuple[str, int]] = attrs.field(factory=dict, init=False)

    def settle(self) -> None:
        """The text after a stream's position joins its output again (:attr:`tails`): before anything but
        a write reads the output."""
        if self.tails:
            from rt_testrunner.capture_file import settle

            for which, tail in self.tails.items():
                settle(self.out if which == "out" else self.err, tail)
            self.tails.clear()
            self.lengths.clear()

    def seek(self, which: str, offset: int, whence: int) -> int:
        """``sys.stdout.seek`` while the test's output is captured: pytest's ``sys.stdout`` is a file (its
        fd capture's temporary file, ``--capture=sys``'s ``CaptureIO``) that holds the phase's output, so
        a library may seek back and read what it printed (pyexcel 0.7.6's ``save_to_memory("csv",
        sys.stdout)`` seeks to 0, and its tests read the CSV back from the stream it returns)."""
        from rt_testrunner.capture_file import place, sought

        if which in self.tails and (offset, whence) == (0, 1):  # tell() while writing over: no end to count
            return self.positions[which]
        length = self._phase_length(which)
        return place(self.positions, which, sought(length, self.positions.get(which), offset, whence), length)

    def read(self, which: str, size: int | None) -> str:
        """``sys.stdout.read`` while captured: the phase's output from where the last ``seek`` left it
        (nothing, at the end, before any)."""
        from rt_testrunner.capture_file import place, read_from

        if which not in self.positions:
            return ""
        whole = self._phase_text(which)
        text, position = read_from(whole, self.positions[which], size)
        place(self.positions, which, position, len(whole))
        return text

    def truncate(self, which: str, size: int | None) -> int:
        """``sys.stdout.truncate`` while captured: the phase's output cut to ``size``; the stream stays where
        it is, as a file's (past the new end, the next write leaves a gap)."""
        from rt_testrunner.capture_file import place, truncate_to

        self.settle()
        position = self.positions.get(which, self._phase_length(which))
        size = position if size is None else size
        truncate_to(self.out if which == "out" else self.err, self._phase_start(which), size)
        self.lengths.pop(which, None)
        place(self.positions, which, position, self._phase_length(which))
        return size

    def _write_at(self, which: str, text: str) -> None:
        """A write after a ``seek`` to before the end: at the stream's position, over what the phase wrote
        there, as into pytest's capture file (a write after ``seek(0)`` overwrites, it does not append);
        once it reaches the end, the stream appends again. What reached the descriptors since joins the
        output first (the whole output, then, when it is split at the position again); only then: a run of
        writes over the output under ``--capture=fd`` joined it back at each (5,000 writes after ``seek(0)``
        over 2 MB: 0.45 s, pytest 0.02 s)."""
        from rt_testrunner.capture_file import write_at

        descriptors = _DESCRIPTORS[0] if _DESCRIPTORS else None
        if descriptors is not None and descriptors.owner is self and descriptors.holds_output():
            self.settle()
            descriptors.drain()
        pieces = self.out if which == "out" else self.err
        tail, after = write_at(
            pieces, self._phase_start(which), self.positions[which], text, self.tails.pop(which, None)
        )
        self.lengths.pop(which, None)
        if tail is not None:
            self.tails[which] = tail
        if after is None:
            del self.positions[which]
        else:
            self.positions[which] = after

    def _phase_length(self, which: str) -> int:
        """How long the running phase's output of stream ``which`` is, counting only the pieces added since
        the last count (what reached the descriptors joins the pieces first)."""
        self.settle()
        descriptors = _DESCRIPTORS[0] if _DESCRIPTORS else None
        if descriptors is not None and descriptors.owner is self:
            descriptors.drain()
        pieces = self.out if which == "out" else self.err
        start = self._phase_start(which)
        counted_start, counted, length = self.lengths.get(which, (start, start, 0))
        if counted_start != start or counted > len(pieces):
            counted, length = start, 0
        length += sum(map(len, pieces[counted:]))
        self.lengths[which] = (start, len(pieces), length)
        return length

    def _phase_start(self, which: str) -> int:
        """Where the running phase's output starts in ``out`` (``err``)."""
        if not self.phases or len(self.phases) < 2:
            return 0
        _, out, err, _ = self.phases[-1]
        return out if which == "out" else err

    def _phase_text(self, which: str) -> str:
        out, err = self.phase_output()
        return out if which == "out" else err

    def enter(self, when: str) -> None:
        """A pytest test enters phase ``when``: what it writes from now on is shown under that phase's
        title (``Captured stdout setup``), as pytest's report sections are."""
        self.settle()
        self.positions.clear()
        if self.fixture is not None:
            self.fixture.push()  # what capsys took and the test did not read: the previous phase's too
        _reassert_streams()
        descriptors = _DESCRIPTORS[0] if _DESCRIPTORS else None
        if descriptors is not None and descriptors.owner is self:
            descriptors.drain()  # what reached the descriptors so far was the previous phase's
        if self.files:
            return  # what goes to the descriptors' files joins the output at the end: one section, in order
        self.phases.append((when, len(self.out), len(self.err), len(self.log)))

    def take(self, which: str, text: str) -> None:
        """``text`` written to stream ``which`` outside a fixture's streams: the test's output, or the
        terminal's for a test whose output is not captured."""
        if self.passthrough:
            stream = terminal_stream(which)
            stream.write(text)
            stream.flush()
            return
        self.add(which, text)

    def add(self, which: str, text: str) -> None:
        """``text`` joins the test's output of stream ``which``. While descriptors 1 and 2 point at this
        test's files (``--capture=fd``), it is written to the file behind the descriptor, as pytest's
        ``sys.stdout`` writes to the file its fd capture reads: what is printed and what reaches the
        descriptor (``os.write``, a subprocess) stay in the order they were written. After a ``seek`` it is
        written where the stream is (:meth:`_write_at`)."""
        if self.positions and which in self.positions:
            self._write_at(which, text)
            return
        descriptors = _DESCRIPTORS[0] if _DESCRIPTORS else None
        if descriptors is not None and descriptors.owner is self:
            data = memoryview(text.encode("utf-8", "replace"))
            target = descriptors.files[0 if which == "out" else 1]
            while data:
                data = data[RealOs.write(target, data) :]
            return
        (self.out if which == "out" else self.err).append(text)

    def phase_output(self) -> tuple[str, str]:
        """What the test wrote to stdout and stderr in the phase running now (all of it outside phases)."""
        self.settle()
        descriptors = _DESCRIPTORS[0] if _DESCRIPTORS else None
        if descriptors is not None and descriptors.owner is self:
            descriptors.drain()  # what reached descriptors 1 and 2 so far (--capture=fd) joins the output
        start = self.phases[-1] if self.phases and len(self.phases) > 1 else ("", 0, 0, 0)
        return "".join(self.out[start[1] :]), "".join(self.err[start[2] :])

    def report(self) -> str:
        """The sections shown under a failure, as pytest titles them: per phase for a pytest test, a phase's
        stdout, stderr and log, then the next phase's."""
        self.settle()
        if not self.phases:
            return "\n".join(_sections("", self.out, self.err, self.log))
        sections: list[str] = []
        bounds = [*self.phases, ("", len(self.out), len(self.err), len(self.log))]
        for index, ((when, out, err, log), (_, out_end, err_end, log_end)) in enumerate(
            zip(bounds, bounds[1:], strict=False)
        ):
            if index == 0:
                out = err = log = 0  # anything written before the first phase belongs to it
            title = f" {when}"
            sections += _sections(title, self.out[out:out_end], self.err[err:err_end], self.log[log:log_end])
        return "\n".join(sections)


def _sections(when: str, out: list[str], err: list[str], log: list[str]) -> list[str]:
    sections = []
    for title, text in (("stdout", "".join(out)), ("stderr", "".join(err)), ("log", "\n".join(log))):
        if text.strip():
            sections.append(f"----- Captured {title}{when} -----\n{text.rstrip()}")
    return sections


def merge_sections(report: str, *more: str) -> str:
    """A test's captured sections (:meth:`Capture.report`) with more of them (what its scope's teardown
    wrote): a section of a title already there (``Captured stdout teardown``) goes on with the new text, as
    pytest's one section per phase and stream; a new title is added after the others."""
    sections: dict[str, str] = {}
    for text in (report, *more):
        for header, body in _split_sections(text):
            sections[header] = f"{sections[header]}\n{body}" if header in sections and body else body
    return "\n".join(f"{header}\n{body}" if body else header for header, body in sections.items())


def _split_sections(report: str) -> list[tuple[str, str]]:
    """``(header, text)`` of each ``----- Captured ... -----`` section of a report."""
    found: list[tuple[str, list[str]]] = []
    for line in report.splitlines():
        if line.startswith("----- Captured ") and line.endswith(" -----"):
            found.append((line, []))
        elif found:
            found[-1][1].append(line)
    return [(header, "\n".join(lines)) for header, lines in found]


CURRENT: contextvars.ContextVar[Capture | None] = contextvars.ContextVar("rt_capture", default=None)

#: the captures of the tests running now, with the thread running each. A thread the test started (a pool
#: of ``loop.run_in_executor``, aiofiles' file objects) has a context of its own, without the test's
#: capture: what it writes goes to the test when one test alone is running, as under pytest, whose capture
#: replaces the streams of the whole process. With several running (``--concurrent``), it is nobody's.
_RUNNING: dict[int, tuple[Capture, int]] = {}


def _found() -> Capture | None:
    """The capture of the test running in this context (or thread), passthrough or not."""
    capture = CURRENT.get()
    if capture is not None or len(_RUNNING) != 1:
        return capture
    ((running, owner),) = _RUNNING.values()
    thread = threading.get_ident()
    if thread == owner or thread == threading.main_thread().ident:
        return None  # the test's own thread outside its context, or rt's: the terminal
    return running


def _current() -> Capture | None:
    """The capture that takes what is written here, None for the terminal."""
    capture = _found()
    if capture is None or capture.passthrough:
        return None
    return capture


def begin(capture: Capture | None) -> None:
    """A test starts running with ``capture`` in this thread: the output of threads it starts goes there too
    (until :func:`end`), and with ``--capture=fd`` what reaches descriptors 1 and 2 while it runs alone."""
    if _LOG_PENDING and "logging" in sys.modules:
        _add_log_handler()
    if capture is not None:
        descriptors = _descriptors() if not capture.passthrough else None
        if descriptors is not None:
            if _RUNNING:
                descriptors.restore()  # tests run concurrently: whose a descriptor's output is, is unknown
            else:
                descriptors.redirect(capture)
        _RUNNING[id(capture)] = (capture, threading.get_ident())


def end(capture: Capture | None) -> None:
    if capture is not None:
        _reassert_streams()
        _RUNNING.pop(id(capture), None)
        if _DESCRIPTORS and _DESCRIPTORS[0].owner is capture:
            _DESCRIPTORS[0].restore()
        if capture.files:
            capture.drain()


class _Descriptors:
    """Descriptors 1 and 2 pointed at temporary files of this process while one test runs (``--capture=fd``,
    pytest's default), and text streams on copies of the terminal's descriptors, which rt's own output and
    ``capsys.disabled()`` use meanwhile. Made per process: a ``--parallel`` worker forked from a zygote must
    not share the files' offsets with its siblings."""

    def __init__(self) -> None:
        self.pid = RealOs.getpid()
        self.files = (_temporary_descriptor(), _temporary_descriptor())
        self.saved = (RealOs.dup(1), RealOs.dup(2))
        real_out, real_err = _INSTALLED[0], _INSTALLED[1]
        self.terminal: tuple[TextIO, TextIO] = tuple(  # type: ignore[assignment]
            open(  # noqa: SIM115 - kept for the process
                fd,
                "w",
                encoding=getattr(real, "encoding", None) or "utf-8",
                errors=getattr(real, "errors", None) or "strict",
                buffering=1,
                closefd=False,
            )
            for fd, real in zip(self.saved, (real_out, real_err), strict=True)
        )
        #: the test whose output the files take now
        self.owner: Capture | None = None

    def redirect(self, capture: Capture) -> None:
        _flush_streams()
        RealOs.dup2(self.files[0], 1)
        RealOs.dup2(self.files[1], 2)
        self.owner = capture

    def holds_output(self) -> bool:
        """Whether the files took anything since the last :meth:`drain` (Python's buffers written out first):
        a look at their offsets, without reading them."""
        if self.owner is None:
            return False
        _flush_streams()
        return any(RealOs.lseek(fd, 0, os.SEEK_CUR) for fd in self.files)

    def drain(self) -> None:
        """Move what the files took into the owner's output, and empty them."""
        owner = self.owner
        if owner is None:
            return
        _flush_streams()
        for fd, target in zip(self.files, (owner.out, owner.err), strict=True):
            size = RealOs.lseek(fd, 0, os.SEEK_CUR)
            if not size:
                continue
            data = RealOs.pread(fd, size, 0)
            RealOs.ftruncate(fd, 0)
            RealOs.lseek(fd, 0, os.SEEK_SET)  # the offset is shared with descriptor 1 or 2
            target.append(data.decode("utf-8", "replace"))

    def close(self) -> None:
        """The files and the copies of the terminal's descriptors closed (the run is over)."""
        self.restore()
        for fd in self.files:
            RealOs.close(fd)
        for stream in self.terminal:
            stream.close()  # closefd=False: flushed, the descriptor itself is closed below
        for fd in self.saved:
            RealOs.close(fd)

    def restore(self) -> None:
        """The terminal's descriptors back, what the files took given to their owner."""
        if self.owner is None:
            return
        try:
            self.drain()
        finally:  # the terminal back whatever happened: else every later line of the run is lost
            RealOs.dup2(self.saved[0], 1)
            RealOs.dup2(self.saved[1], 2)
            self.owner = None


def _temporary_descriptor() -> int:
    """An anonymous file's descriptor: in memory where Linux has ``memfd_create`` (``tempfile``'s import is
    kept out of a plain run: tempfile, random and shutil), else a temporary file's."""
    make = getattr(os, "memfd_create", None)
    if make is not None:
        try:
            return int(make("rt-test-capture", os.MFD_CLOEXEC))
        except OSError:
            pass
    import tempfile

    with tempfile.TemporaryFile(buffering=0) as file:
        return RealOs.dup(file.fileno())


def _flush_streams() -> None:
    """Python's own buffers written out before a descriptor changes hands."""
    for stream in (*_INSTALLED[:2], sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


#: this process's :class:`_Descriptors`, made when the first test runs
_DESCRIPTORS: list[_Descriptors] = []
#: pytest's ``--capture`` method of this run: "fd", "sys" or "tee-sys"
_MODE: list[str] = ["fd"]


def _descriptors() -> _Descriptors | None:
    if _MODE[0] != "fd" or not _INSTALLED:
        return None
    if _DESCRIPTORS and _DESCRIPTORS[0].pid == RealOs.getpid():
        return _DESCRIPTORS[0]
    try:
        made = _Descriptors()
    except OSError:  # no descriptor 1 or 2 to copy (a daemon): capture at the sys level only
        _MODE[0] = "sys"
        return None
    _DESCRIPTORS[:] = [made]
    return made


@contextlib.contextmanager
def descriptors_suspended() -> Iterator[None]:
    """Descriptors 1 and 2 on the terminal again for a while (``capsys.disabled()``), as pytest suspends its
    global capture there: a tool that redirects descriptor 1 itself (sacred's tee of the process's output)
    then sees the terminal, not the test's file, and ``sys.stdout`` writes to the descriptor it redirected.
    What the files took so far stays the test's output; the files take the output again afterwards."""
    descriptors = _DESCRIPTORS[0] if _DESCRIPTORS else None
    owner = descriptors.owner if descriptors is not None else None
    if descriptors is None or owner is None or descriptors.pid != RealOs.getpid():
        yield
        return
    descriptors.restore()
    try:
        yield
    finally:
        descriptors.redirect(owner)


def _terminal(which: str) -> TextIO | None:
    """The terminal's stream while the descriptors point at a test's files, else None."""
    if _DESCRIPTORS and _DESCRIPTORS[0].owner is not None:
        return _DESCRIPTORS[0].terminal[0 if which == "out" else 1]
    return None


class _Unpicklable:
    """Streams are not picklable, as the real ones and pytest's capture files are not (``cannot pickle
    '_io.TextIOWrapper' object``): dill, which pickles the process's own ``sys.__stdout__`` by name, would
    otherwise copy a ``PrettyPrinter`` or a ``StreamHandler`` holding rt's stand-in, where under pytest it
    cannot (dill's test_registered.py counts the types it can copy)."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"cannot pickle {type(self).__name__!r} object")


class _Router(_Unpicklable, io.TextIOBase):
    """Stands in for ``sys.stdout`` or ``sys.stderr``."""

    def __init__(self, real: TextIO, which: str) -> None:
        self._real = real
        self._which = which
        self._buffer = _BytesRouter(self)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        capture = _current()
        if capture is None:
            terminal = _terminal(self._which)
            if terminal is not None:  # descriptor 1 or 2 is a test's file now (capsys.disabled())
                written = terminal.write(text)
                terminal.flush()
                return written
            return self._real.write(text)
        if _MODE[0] == "tee-sys":
            terminal = _terminal(self._which)
            (terminal or self._real).write(text)
        file = capture.files.get(self._which)
        if file is not None:  # the test took the stream's file descriptor: its writes go there
            file.write(text.encode("utf-8", "replace"))
            return len(text)
        capture.add(self._which, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _current() is None:
            self._real.flush()

    def isatty(self) -> bool:
        capture = _current()
        if capture is None:
            return self._real.isatty()
        # the test's own file descriptor is a terminal once the test redirected it to one
        file = capture.files.get(self._which)
        return file is not None and file.isatty()

    def fileno(self) -> int:
        capture = _current()
        if capture is None:
            return self._real.fileno()
        return capture.fileno(self._which)

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        """Captured, a file, as pytest's ``sys.stdout`` is (:meth:`Capture.seek`); else the real stream's."""
        return _current() is not None or self._real.readable()

    def seekable(self) -> bool:
        return _current() is not None or self._real.seekable()

    def seek(self, offset: int, whence: int = 0) -> int:
        capture = _current()
        if capture is None:
            return self._real.seek(offset, whence)
        return capture.seek(self._which, offset, whence)

    def tell(self) -> int:
        capture = _current()
        if capture is None:
            return self._real.tell()
        return capture.seek(self._which, 0, 1)

    def read(self, size: int | None = -1) -> str:
        capture = _current()
        if capture is None:
            return self._real.read(-1 if size is None else size)
        return capture.read(self._which, size)

    def truncate(self, size: int | None = None) -> int:
        capture = _current()
        if capture is None:
            return self._real.truncate(size)
        return capture.truncate(self._which, size)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._real, "encoding", "utf-8") or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._real, "errors", None)

    @property
    def buffer(self) -> Any:
        """Always the same object, as a real stream's: code keeps ``sys.stdout.buffer`` and compares it later
        (structlog's loggers pickle as "stdout" only when their file ``is sys.stdout.buffer``)."""
        return self._buffer


class _FixtureRouter(_Router):
    """``sys.stdout`` or ``sys.stderr`` while a test's ``capsys`` or ``capfd`` is set up, as pytest's fixture
    puts stream objects of its own there: what is written through them goes to the fixture of the test
    running in this context; what is written through the stream an object kept before (cmd2's app, made by a
    fixture set up before ``capsys``, writes to the ``sys.stdout`` it saw) goes to the test's captured output
    and not to the fixture, as under pytest. Without a fixture in this context (tests running concurrently,
    ``capsys.disabled()``) it writes as the router it replaced."""

    def write(self, text: str) -> int:
        capture = _found()
        fixture = capture.fixture if capture is not None else None
        if fixture is None:
            return super().write(text)
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        fixture.write(self._which, text)
        if fixture.tee:  # capteesys: on to what the fixture replaced (the test's output, or the terminal)
            capture.take(self._which, text)  # type: ignore[union-attr]
        return len(text)

    def flush(self) -> None:
        capture = _found()
        if capture is None or capture.fixture is None:
            super().flush()

    def isatty(self) -> bool:
        capture = _found()
        if capture is None or capture.fixture is None:
            return super().isatty()
        return False  # pytest's CaptureIO, or capfd's temporary file

    def fileno(self) -> int:
        """capsys's streams have no descriptor, as pytest's ``CaptureIO`` (a library probing the terminal,
        tqdm's screen width, catches ``io.UnsupportedOperation`` and writes on); capfd's is the redirected
        descriptor itself."""
        capture = _found()
        if capture is None or capture.fixture is None:
            return super().fileno()
        return capture.fixture.fileno(self._which)

    def seek(self, offset: int, whence: int = 0) -> int:
        """Within what the fixture took (pytest's ``CaptureIO`` is a file the test may seek in)."""
        capture = _found()
        if capture is None or capture.fixture is None:
            return super().seek(offset, whence)
        return capture.fixture.seek(self._which, offset, whence)

    def tell(self) -> int:
        return self.seek(0, 1)

    def read(self, size: int | None = -1) -> str:
        capture = _found()
        if capture is None or capture.fixture is None:
            return super().read(size)
        return capture.fixture.read(self._which, size)

    def truncate(self, size: int | None = None) -> int:
        capture = _found()
        if capture is None or capture.fixture is None:
            return super().truncate(size)
        return capture.fixture.truncate(self._which, size)


#: the two :class:`_FixtureRouter` objects, made once, in ``sys.stdout``/``sys.stderr`` while at least one
#: capture fixture is set up; with the streams they replaced
_FIXTURE_STREAMS: list[Any] = []
#: how many capture fixtures are set up now (tests running concurrently may each have one)
_FIXTURES_ACTIVE: list[int] = [0]


def fixture_started(fixture: FixtureStreams, test: Capture) -> None:
    """``fixture`` takes the output written through ``sys.stdout``/``sys.stderr`` as they are from now on (not
    through the streams objects kept before it started), until :func:`fixture_stopped`."""
    test.fixture = fixture
    if not _FIXTURE_STREAMS:
        out, err = _INSTALLED[0], _INSTALLED[1]
        _FIXTURE_STREAMS.extend([_FixtureRouter(out, "out"), _FixtureRouter(err, "err"), None, None])
    if _FIXTURES_ACTIVE[0] == 0:
        _FIXTURE_STREAMS[2:] = [sys.stdout, sys.stderr]
        sys.stdout, sys.stderr = _FIXTURE_STREAMS[0], _FIXTURE_STREAMS[1]
    _FIXTURES_ACTIVE[0] += 1


def fixture_stopped(test: Capture) -> None:
    """The fixture of ``test`` is torn down: what it did not give back (:meth:`FixtureStreams.push`) is lost;
    the streams it replaced are put back once no other fixture is set up, as pytest puts back the ones its
    fixture found."""
    test.fixture = None
    _FIXTURES_ACTIVE[0] -= 1
    if _FIXTURES_ACTIVE[0] == 0:
        sys.stdout, sys.stderr = _FIXTURE_STREAMS[2], _FIXTURE_STREAMS[3]
        _FIXTURE_STREAMS[2:] = [None, None]


class _BytesRouter(_Unpicklable, io.RawIOBase):
    def __init__(self, text: _Router) -> None:
        self._text = text

    def write(self, data: Any) -> int:
        self._text.write(bytes(data).decode(self._text.encoding, "replace"))
        return len(data)

    def writable(self) -> bool:
        return True


class _InputRouter(io.TextIOBase):
    """Stands in for ``sys.stdin``: while a test's output is captured, reading raises OSError, as under
    pytest (a test waiting for input that a captured prompt never showed would hang the run), and the stream
    answers as pytest's pseudo-file does: no file descriptor (``fileno()`` raises
    ``io.UnsupportedOperation``, which code probing for one catches: sh's ``_in=sys.stdin``), not readable,
    not seekable, not a terminal, closing it does nothing. Otherwise the real stream answers."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def _stream(self) -> Any:
        if _current() is not None:
            raise OSError("rt test: reading from stdin while output is captured (run with -s to turn it off)")
        return self._real

    def _unsupported(self, what: str) -> Any:
        """The real stream, or pytest's ``io.UnsupportedOperation`` while output is captured."""
        if _current() is not None:
            raise io.UnsupportedOperation(f"redirected stdin is pseudofile, has no {what}")
        return self._real

    def read(self, size: int | None = -1) -> Any:
        return self._stream().read(size)

    def readline(self, size: int | None = -1) -> Any:
        return self._stream().readline(size)

    def readlines(self, hint: int = -1) -> Any:
        return self._stream().readlines(hint)

    def __iter__(self) -> Any:
        return iter(self._stream())

    def fileno(self) -> int:
        return int(self._unsupported("fileno()").fileno())

    def flush(self) -> None:
        self._unsupported("flush()").flush()

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._unsupported("seek(int)").seek(offset, whence))

    def tell(self) -> int:
        return int(self._unsupported("tell()").tell())

    def isatty(self) -> bool:
        return _current() is None and bool(self._real.isatty())

    def readable(self) -> bool:
        return _current() is None and bool(self._real.readable())

    def seekable(self) -> bool:
        return _current() is None and bool(self._real.seekable())

    def close(self) -> None:
        """Does nothing, as pytest's pseudo-file: the next tests read through this router."""

    @property
    def buffer(self) -> Any:
        return self if _current() is not None else self._real.buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._real, "encoding", "utf-8") or "utf-8"


def _log_handler() -> Any:
    """The root logger's handler that appends each record to the running test's capture. It is of pytest's
    kind, a ``logging.StreamHandler`` over a text buffer (pytest's report handler is its
    ``LogCaptureHandler``), so code under test that inspects the handlers of a logger that does not propagate
    (where rt puts it too, :func:`attach_to_unpropagating`) finds a stream handler with a ``stream``; its
    ``emit`` is rt's own, no slower than a plain handler's, and the buffer stays empty."""
    import logging

    class LogCaptureHandler(logging.StreamHandler):  # type: ignore[type-arg]
        def __init__(self) -> None:
            super().__init__(io.StringIO())

        def emit(self, record: logging.LogRecord) -> None:
            capture = _found()  # a passthrough capture's too: logging is captured under -s
            if capture is not None:
                try:
                    capture.log.append(self.format(record))
                except Exception:  # noqa: BLE001 - a record that cannot be formatted must not fail the test
                    self.handleError(record)

    handler = LogCaptureHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    return handler


_INSTALLED: list[Any] = []
#: True while the streams are captured but logging is not, because nothing imported it yet
_LOG_PENDING: list[bool] = []


def _add_log_handler() -> None:
    import logging

    _LOG_PENDING.clear()
    handler = _log_handler()
    logging.getLogger().addHandler(handler)
    _INSTALLED[2] = handler


def report_handler() -> Any:
    """The handler that gives log records to the running test's report sections, None when logging is not
    captured (``-s``, or nothing imported ``logging`` yet)."""
    return _INSTALLED[2] if _INSTALLED else None


def attach_to_unpropagating(handlers: list[Any]) -> list[tuple[Any, Any]]:
    """Add ``handlers`` to every logger that does not pass its records up to the root logger
    (``propagate = False``: uvicorn's, a library's configured with ``dictConfig``), as pytest's logging plugin
    does at the start of each phase of a test: without it, what such a logger emits (in any thread) would
    never reach ``caplog`` or the test's "Captured log" section. Returns what was added, for
    :func:`detach`."""
    import logging

    root = logging.getLogger()
    attached = []
    for logger in list(root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and not logger.propagate and logger is not root:
            for handler in handlers:
                if handler not in logger.handlers:
                    logger.addHandler(handler)
                    attached.append((logger, handler))
    return attached


def detach(attached: list[tuple[Any, Any]]) -> None:
    for logger, handler in attached:
        logger.removeHandler(handler)
    attached.clear()


def install(logging: bool = True, method: str = "fd") -> None:
    """Route the streams and logging (unless ``-p no:logging`` blocked pytest's logging plugin: ``logging``
    False) through the per-test buffers (once per process); ``method`` is pytest's ``--capture``: "fd" also
    takes descriptors 1 and 2 while a test runs alone, "sys" does not, "tee-sys" shows the output too, "no"
    (``-s``, ``-p no:capture``) leaves the streams alone and captures logging only, as pytest's logging
    plugin captures without its capture plugin."""
    if _INSTALLED:
        return
    _MODE[0] = method
    _INSTALLED.extend([sys.stdout, sys.stderr, None, sys.stdin])
    if method != "no":
        route_streams()
    if not logging:
        return
    _LOG_PENDING.append(True)
    if "logging" in sys.modules:
        _add_log_handler()


def route_streams() -> None:
    """The streams replaced by the routers (once per process): by :func:`install`, or under ``-s`` by the
    first ``capsys``/``capfd``, whose streams replace the routers while it is set up."""
    if not _INSTALLED:
        install(logging=False, method="no")
    if _ROUTED:
        return
    real_out, real_err, _, real_in = _INSTALLED
    _ROUTED.extend([_Router(real_out, "out"), _Router(real_err, "err")])
    sys.stdout, sys.stderr = _ROUTED
    if real_in is not None:
        sys.stdin = _InputRouter(real_in)


#: the two routers once :func:`route_streams` replaced the streams
_ROUTED: list[_Router] = []


def _reassert_streams() -> None:
    """The routers (or the capture fixtures' streams while one is set up) put in ``sys.stdout``/``sys.stderr``
    again as a test's phase starts and as the test ends, as pytest's global capture sets its streams at each
    phase's start and end: an object a test left there does not outlive it (structlog's test sets
    ``sys.stdout`` with monkeypatch, which puts back capsys's stream after capsys ended)."""
    if _ROUTED:
        streams = _FIXTURE_STREAMS if _FIXTURES_ACTIVE[0] else _ROUTED
        sys.stdout, sys.stderr = streams[0], streams[1]


def settle_tempdir() -> None:
    """Fill ``tempfile.tempdir`` as pytest's default capture does: its fd capture opens a ``TemporaryFile``,
    which calls ``tempfile.gettempdir()``, so under pytest the module's ``tempdir`` is never None when a test
    runs, and suites pass it where a path is needed (requests-toolbelt's
    ``get_download_file_path(r, tempfile.tempdir)``). Only when the suite's imports loaded ``tempfile``
    (every pytest suite does): importing it for a plain run would cost its start-up."""
    module = sys.modules.get("tempfile")
    if _INSTALLED and _MODE[0] != "no" and module is not None and module.tempdir is None:
        module.gettempdir()


def uninstall() -> None:
    if not _INSTALLED:
        return
    if _DESCRIPTORS:
        descriptors = _DESCRIPTORS.pop()
        if descriptors.pid == RealOs.getpid():
            descriptors.close()
    real_out, real_err, handler, real_in = _INSTALLED
    if _ROUTED:
        sys.stdout, sys.stderr, sys.stdin = real_out, real_err, real_in
        _ROUTED.clear()
    if handler is not None:
        import logging

        logging.getLogger().removeHandler(handler)
    _INSTALLED.clear()
    _LOG_PENDING.clear()
    _FIXTURE_STREAMS.clear()
    _FIXTURES_ACTIVE[0] = 0


def real_streams() -> tuple[TextIO, TextIO]:
    """The terminal's stdout and stderr, whether or not the routers are in place."""
    if _INSTALLED:
        return _INSTALLED[0], _INSTALLED[1]
    return sys.stdout, sys.stderr


def terminal_stream(which: str) -> TextIO:
    """The terminal's stream ``which`` (``"out"``, ``"err"``), written past any capture: live logging's."""
    terminal = _terminal(which)
    if terminal is not None:
        return terminal
    real_out, real_err = real_streams()
    return real_out if which == "out" else real_err


def installed() -> bool:
    """Whether the routers are in ``sys.stdout``/``sys.stderr``."""
    return bool(_ROUTED)
