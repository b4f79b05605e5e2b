"""``rt test --parallel``'s warm template: one process that ``fork()``\\ s every worker.

A worker started as a fresh interpreter pays Python's and rt's start-up (the runner's modules, attrs classes,
the kernel's plugins: about 0.2 s of CPU) before its first test, once per worker, which on a suite of a second
or two is most of what ``--parallel`` adds. The zygote pays it once: ``rt test --parallel`` starts it first
thing (while the main process still parses its command line and finds the test files), it imports what a
worker needs and builds its kernel, and then forks a worker whenever the main process asks for one. A forked
worker starts from that state at once and runs :func:`rt_testrunner.worker.serve`, as a fresh one does.

The zygote itself is a fork of the main process, made before the main process starts any thread or imports
any test file (:func:`_fork_zygote`), so it starts with rt, the kernel and the command already imported; a
fresh interpreter (``python -m rt_testrunner.zygote``) paid about 0.15 s of CPU for them, which was the
critical path of a small suite's parallel run. Where that fork is not clean (a thread already runs, or rt's
command line was called by another program's code: :func:`_forks_cleanly`), the zygote is that fresh
interpreter, as before.

Why a separate process and not the main process forking the workers itself (:mod:`rt_testrunner.worker`
gives the reasons): the zygote holds nothing a fork could break. It imports no test file before the run's
collection, starts no thread and no event loop, and takes no lock: it only waits on its control socket and
on ``SIGCHLD``. The main process, meanwhile, runs threads (one reader per worker) and the reporters.

The control socket (``AF_UNIX``, ``SOCK_SEQPACKET``: one packet per message) carries, from the main process,
``FORK`` requests with the new worker's two pipe ends attached (``SCM_RIGHTS``), and back, the new worker's
pid (``FORKED``) and later its exit status (``EXITED``, as :attr:`subprocess.Popen.returncode` gives it:
negative for a signal), since only the zygote, its parent, can wait for it. POSIX only: where ``fork`` is
missing or unsafe (Windows, macOS) or ``RT_TEST_FORK=0`` is set, workers are fresh interpreters
(:func:`rt_testrunner.pool.launch`); the results are the same either way.
"""

from __future__ import annotations

import gc
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from rt_testrunner import wire

#: one control message: kind, then two numbers (FORK: worker number, 0; FORKED: number, pid; EXITED: pid, code;
#: COLLECT: 0, 0)
MESSAGE = struct.Struct("<cii")
FORK, FORKED, EXITED, COLLECT = b"F", b"P", b"X", b"C"
#: how long a fork request may wait for the zygote's answer (it may still be starting up: seconds at most)
_ANSWER_S = 120.0
#: how long the zygote may take to exit once the run is over (it waits for its workers, already ended)
_EXIT_GRACE_S = 10.0


def available(environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """Workers are forked from a zygote here: POSIX ``fork`` and descriptor passing exist and are safe to use,
    and ``RT_TEST_FORK=0`` does not ask for fresh interpreters."""
    if environ.get("RT_TEST_FORK", "1") == "0":
        return False
    if sys.platform == "darwin":  # system libraries there may not survive a fork without exec
        return False
    return hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("rt_testrunner.zygote: started by `rt test --parallel`, not by hand", file=sys.stderr)
        return 2
    _no_working_directory_on_path()
    return _live(socket.socket(fileno=int(args[0])))


def _no_working_directory_on_path() -> None:
    # as a fresh worker does (rt_testrunner.worker.main): no working directory first on sys.path
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]


def _live(control: socket.socket) -> int:
    """The zygote's life: build what every worker needs, collect the run when asked, fork the workers. It
    returns only in a forked worker, with that worker's exit status (the zygote itself leaves with
    ``os._exit``, its children reaped)."""
    # as the gc module's documentation advises for a process that forks without exec: no collection while
    # it builds what it will share (no freed holes in its pages), rt's own objects frozen before the first
    # fork (the workers' collections never touch them, so their pages stay shared), and the collector on
    # again in each worker. What the suite builds here (its test files, conftest.py files, plugins) is not
    # frozen, as in one process (rt_testrunner.exiting.freeze_start_up): frozen objects are invisible to
    # gc.get_referrers and gc.get_objects, which suites and libraries read (Hypothesis's register_random
    # warned, in forked workers only, that trio's module-level Random had no referrer)
    gc.disable()
    # everything a worker needs before its set-up arrives, imported and built once for all of them
    from rt.kernel import Kernel
    from rt_testrunner import worker

    kernel = Kernel()
    gc.freeze()
    collected: list[worker.Prepared] = []

    def collect(channel: wire.Channel) -> bool:
        # the run's test files, imported once here for every worker forked afterwards (the collector runs
        # while they are imported, as in one process; what they built is left to the collector). True: a
        # thread runs here now, so no worker can be forked: this process runs tests itself, on this channel
        gc.enable()
        try:
            prepared, can_fork = worker.collect_in_zygote(channel, kernel)
        except (EOFError, BrokenPipeError):
            channel.close()
            _leave(1)  # the main process is gone or stopping the run (Ctrl-C): nothing to report to
        collected.append(prepared)
        if not can_fork:
            return True
        channel.close()
        gc.disable()
        return False

    forked = _serve(control, collect)
    if forked is None:
        # it may have imported test files: their objects are left to the exit, as a worker's are
        _leave(0)  # nothing of its own to tear down: its children are reaped, its workers ran the tests
    number, channel = forked
    gc.enable()
    os.environ["RT_TEST_WORKER"] = str(number)
    # it ends as a fresh worker does, through the interpreter's teardown (run() freezes the collector
    # first: rt_testrunner.exiting), so what its tests left open is flushed and closed as there
    return worker.run(channel, kernel, collected[0] if collected else None)


def _leave(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _serve(
    control: socket.socket, collect: Callable[[wire.Channel], bool]
) -> tuple[int, wire.Channel] | None:
    """Fork a worker per request until the main process closes the socket. Returns in the forked child only:
    its worker number and channel (the parent never returns a worker: it exits when the main process is gone,
    after its children). A COLLECT request (before any fork) runs ``collect`` here, on the channel it
    brings; when forking is not safe after it, this process returns as worker 1 on that channel."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wake-up descriptor is written
    signal.set_wakeup_fd(wake_w)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    children: set[int] = set()
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is control:
                    try:
                        data, fds, _flags, _address = socket.recv_fds(control, MESSAGE.size, 2)
                    except OSError:
                        data, fds = b"", []
                    if not data:  # the main process is gone: its workers end when their pipes close
                        return None
                    kind, number, _ = MESSAGE.unpack(data)
                    if kind == COLLECT and len(fds) == 2 and not children:
                        from rt_testrunner.wire import Channel

                        channel = Channel(fds[0], fds[1])
                        if collect(channel):
                            _become_worker(selector, control, wake_r, wake_w)
                            return 1, channel
                        continue
                    if kind != FORK or len(fds) != 2:
                        for fd in fds:
                            os.close(fd)
                        continue
                    pid = os.fork()
                    if pid == 0:
                        _become_worker(selector, control, wake_r, wake_w)
                        children.clear()  # its siblings are not its children
                        from rt_testrunner.wire import Channel

                        return number, Channel(fds[0], fds[1])
                    for fd in fds:
                        os.close(fd)
                    children.add(pid)
                    _send(control, FORKED, number, pid)
                else:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    _reap(control, children)
    finally:
        if children:
            # the main process went away first (it ends its workers itself otherwise): wait for them, so none
            # is left a zombie of this process
            for pid in list(children):
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass


def _become_worker(
    selector: selectors.BaseSelector, control: socket.socket, wake_r: int, wake_w: int
) -> None:
    """None of the zygote's machinery stays with a worker (forked, or the zygote itself taking the first
    piece of work when it cannot fork)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    selector.close()
    control.close()
    os.close(wake_r)
    os.close(wake_w)


def _reap(control: socket.socket, children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        _send(control, EXITED, pid, os.waitstatus_to_exitcode(status))


def _send(control: socket.socket, kind: bytes, a: int, b: int) -> None:
    try:
        control.send(MESSAGE.pack(kind, a, b))
    except OSError:
        pass  # the main process is gone; the next read says so


if __name__ == "__main__":
    sys.exit(main())


# -- the main process's side -------------------------------------------------------------------------------------


def _forks_cleanly() -> bool:
    """The zygote may be a fork of this process, made now: it runs one thread (a fork copies no half-held
    lock), and only ``rt``'s own command line is on the stack (the rt script or ``python -m rt``, its
    command and this call), so the worker that later ends by unwinding it (:func:`_fork_zygote`) runs
    nothing of a caller's (``rt.cli.main`` called by another program, a test harness, a coverage tool)."""
    try:
        if len(os.listdir("/proc/self/task")) != 1:
            return False
    except OSError:
        if threading.active_count() != 1:
            return False
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name not in ("__main__", "runpy") and name.partition(".")[0] not in ("rt", "rt_testrunner"):
            return False
        frame = frame.f_back  # type: ignore[assignment]
    return True


def _fork_zygote(ours: socket.socket, theirs: socket.socket) -> ForkedZygote:
    """The zygote as a fork of this process, made first thing in ``rt test --parallel``: it starts with rt,
    its kernel and the command already imported (a fresh interpreter pays about 0.15 s of CPU for them, on
    the critical path of a small suite's run) and holds no test module, thread or open file of the run yet.

    It is what a fresh zygote is (its own session, stdin from ``/dev/null``, no working directory first on
    ``sys.path``), with this process's ``sys.argv`` and ``__main__``, as in a one-process run. A worker it
    forks ends as a fresh one does, through the interpreter's teardown: it raises ``SystemExit`` with its
    status, which unwinds rt's own command-line frames (:func:`_forks_cleanly`) to the interpreter's exit."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # else what the buffers hold would be written again by the child
        except (OSError, ValueError):
            pass
    pid = os.fork()
    if pid != 0:
        return ForkedZygote(pid)
    try:
        ours.close()
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        _no_working_directory_on_path()
        code = _live(theirs)
    except BaseException:  # noqa: BLE001 - the zygote must never return into the main process's code
        import traceback

        traceback.print_exc()
        _leave(1)
    raise SystemExit(code)


def _kill(pid: int) -> None:
    """SIGKILL a process of ours that may have exited already (a forked zygote or worker)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ForkedZygote:
    """The zygote forked from this process, as :class:`Zygote` uses a :class:`subprocess.Popen` for a fresh
    one (it is this process's child: ``waitpid`` gives its status)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._reaped = threading.Event()

    def _reap(self, flags: int) -> None:
        """``waitpid`` once; when another thread (a worker's waiter, while this one ends the run) reaped it
        first, its status is the one that thread records."""
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:
            if not self._reaped.wait(_EXIT_GRACE_S) and self.returncode is None:
                self.returncode = -signal.SIGKILL  # reaped by someone else: its status is unknown
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)
            self._reaped.set()

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            while self.returncode is None:
                self._reap(0)
            return self.returncode
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while (code := self.poll()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(["rt_testrunner.zygote"], timeout)
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)
        return code

    def kill(self) -> None:
        if self.returncode is None:
            _kill(self.pid)


class ForkedProcess:
    """A worker the zygote forked, as :class:`~rt_testrunner.pool.Pool` uses a :class:`subprocess.Popen`: its
    exit status comes from the zygote (its parent), ``kill`` signals it directly."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._exited = threading.Event()

    def wait(self) -> int:
        self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            _kill(self.pid)

    def exited(self, code: int) -> None:
        self.returncode = code
        self._exited.set()


class Zygote:
    """The main process's handle on its zygote: :meth:`fork` asks for a worker; a reader thread takes the
    zygote's answers (new pids, exit statuses)."""

    def __init__(self, process: subprocess.Popen[bytes] | ForkedZygote, control: socket.socket) -> None:
        self.process = process
        self.control = control
        self._lock = threading.Lock()
        self._asked: dict[int, tuple[threading.Event, list[ForkedProcess]]] = {}  # by worker number
        self._children: dict[int, ForkedProcess] = {}  # by pid
        self._gone = False
        self._reader: threading.Thread | None = None

    @classmethod
    def start(cls, root: Path) -> Zygote:
        """Start the zygote, in its own session as fresh workers are: a fork of this process when that is
        safe here (:func:`_forks_cleanly`), else a fresh interpreter in ``root``."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process: subprocess.Popen[bytes] | ForkedZygote
        try:
            if _forks_cleanly():
                process = _fork_zygote(ours, theirs)
            else:
                process = subprocess.Popen(
                    [sys.executable, "-m", "rt_testrunner.zygote", str(theirs.fileno())],
                    cwd=root,
                    stdin=subprocess.DEVNULL,
                    pass_fds=(theirs.fileno(),),
                    start_new_session=True,
                )
        finally:
            theirs.close()
        return cls(process, ours)

    def fork(self, number: int, read_fd: int, write_fd: int) -> ForkedProcess | None:
        """A new worker with the given pipe ends (closed here), or None when the zygote is gone (the caller
        then starts a fresh interpreter)."""
        with self._lock:
            if self._gone:
                os.close(read_fd)
                os.close(write_fd)
                return None
            if self._reader is None:
                self._reader = threading.Thread(target=self._read, daemon=True)
                self._reader.start()
            answer: tuple[threading.Event, list[ForkedProcess]] = (threading.Event(), [])
            self._asked[number] = answer
        try:
            socket.send_fds(self.control, [MESSAGE.pack(FORK, number, 0)], [read_fd, write_fd])
        except OSError:
            self._lose()
        finally:
            os.close(read_fd)
            os.close(write_fd)
        if not answer[0].wait(_ANSWER_S):
            # a zygote that never answers (stuck starting up) is ended: fresh interpreters take over
            self._lose()
            self.process.kill()
        return answer[1][0] if answer[1] else None

    def collect(self) -> wire.Channel | None:
        """Ask the zygote to collect the run before it forks any worker (``COLLECT``): the channel to send it
        the workers' set-up on and read its progress from, as from a worker's (COLLECTING, then COLLECTED
        with whether it can fork: :func:`rt_testrunner.worker.collect_in_zygote`); None when it is gone."""
        from rt_testrunner.wire import Channel

        to_zygote_r, to_zygote_w = os.pipe()
        from_zygote_r, from_zygote_w = os.pipe()
        with self._lock:
            gone = self._gone
            if not gone and self._reader is None:
                self._reader = threading.Thread(target=self._read, daemon=True)
                self._reader.start()
        try:
            if not gone:
                socket.send_fds(self.control, [MESSAGE.pack(COLLECT, 0, 0)], [to_zygote_r, from_zygote_w])
        except OSError:
            self._lose()
            gone = True
        finally:
            os.close(to_zygote_r)
            os.close(from_zygote_w)
        if gone:
            os.close(from_zygote_r)
            os.close(to_zygote_w)
            return None
        return Channel(from_zygote_r, to_zygote_w)

    def _read(self) -> None:
        while True:
            try:
                data = self.control.recv(MESSAGE.size)
            except OSError:
                data = b""
            if len(data) != MESSAGE.size:
                self._lose()
                return
            kind, a, b = MESSAGE.unpack(data)
            with self._lock:
                if kind == FORKED:
                    child = ForkedProcess(b)
                    self._children[b] = child
                    event, result = self._asked.pop(a, (None, []))
                    result.append(child)
                    if event is not None:
                        event.set()
                elif kind == EXITED and a in self._children:
                    self._children.pop(a).exited(b)

    def _lose(self) -> None:
        """The zygote is gone (or the run ended): nobody waits for an answer that will not come, and the
        workers it forked, whose exit statuses can no longer be known, are ended and count as killed."""
        with self._lock:
            self._gone = True
            asked, self._asked = self._asked, {}
            children, self._children = self._children, {}
        for event, _ in asked.values():
            event.set()
        for child in children.values():
            child.kill()
            child.exited(-signal.SIGKILL)

    def close(self) -> None:
        """End of the run: the zygote exits when its socket closes (its workers have ended by now). It is
        waited for, so that its time (and its workers', which it waited for) counts as this process's
        children's, as fresh workers' does."""
        with self._lock:
            self._gone = True
        try:
            self.control.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.control.close()
        try:
            self.process.wait(_EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
