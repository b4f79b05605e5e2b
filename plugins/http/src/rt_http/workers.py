"""Worker processes: ``rt.serve(..., workers=N)``, ``[serve] workers = N`` or ``rt run --workers N app.py``.

The process that starts the server becomes a supervisor: it reserves the port (a socket bound with
``SO_REUSEPORT`` that never listens, so the port stays ours while workers come and go, and port 0 becomes
one concrete port), then runs the same program again N times (``sys.orig_argv``) with ``RT_WORKER_ID`` and
``RT_WORKER_PORT`` in the environment. In a worker the same ``rt.serve(...)`` call listens on that port
with ``SO_REUSEPORT``, so the kernel spreads new connections over the workers. Re-running the program,
rather than forking, gives every worker a fresh interpreter and event loop (forking a running asyncio or
trio loop is unsafe) and works the same on both backends.

The supervisor restarts a worker that dies (after a pause that grows while it keeps dying at once), and on
SIGTERM or SIGINT sends SIGTERM to every worker, which closes its WebSockets with 1001 and exits. Pub/sub
between workers needs a broker (``[serve] broker``, docs/scaling.md); without one a warning says so.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from rt_http.server import Server

log = logging.getLogger("rt.serve")
WORKER_ID = "RT_WORKER_ID"
WORKER_PORT = "RT_WORKER_PORT"
READY_FD = "RT_WORKER_READY_FD"  # a pipe a worker writes one byte to once it listens
_READY_TIMEOUT = 60.0  # seconds the supervisor waits for its first workers to listen
_STOP_TIMEOUT = 15.0  # seconds workers get to close their sockets after SIGTERM, then SIGKILL
_POLL = 0.1  # seconds between checks that the workers are alive
_RESTART_PAUSE_FIRST, _RESTART_PAUSE_MAX = 0.5, 10.0
_QUICK_DEATH = 2.0  # a worker dying sooner than this after its start counts as crashing at once


def worker_id() -> int | None:
    """This process's worker number (0 ... N-1) when a supervisor started it, else None."""
    value = os.environ.get(WORKER_ID)
    return int(value) if value is not None and value.isdigit() else None


def worker_count(requested: int | None) -> int:
    """``workers=`` if given, else ``[serve] workers`` (``rt run --workers N``); 1 inside a worker."""
    if worker_id() is not None:
        return 1
    if requested is None:
        from rt import get_kernel

        requested = get_kernel().config.get("serve.workers", 1)
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
        raise ValueError(f"workers must be a positive int, got {requested!r}")
    return requested


def worker_port() -> int | None:
    """The port a worker must listen on (its supervisor reserved it), else None."""
    value = os.environ.get(WORKER_PORT)
    return int(value) if value is not None and worker_id() is not None else None


def announce_ready() -> None:
    """In a worker: tell the supervisor this process listens now (``async with server`` there returns)."""
    fd = os.environ.pop(READY_FD, None)
    if fd is not None and fd.isdigit():
        with contextlib.suppress(OSError):  # a restarted worker's supervisor does not wait: nobody reads
            os.write(int(fd), b"r")
        with contextlib.suppress(OSError):
            os.close(int(fd))


def _wait_ready(fds: list[int], timeout: float) -> list[bool]:
    """Block until each pipe has its byte or is closed (the worker died first); True for the ready ones."""
    ready: dict[int, bool] = {}
    deadline = time.monotonic() + timeout
    while len(ready) < len(fds):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        readable, _, _ = select.select([fd for fd in fds if fd not in ready], [], [], left)
        for fd in readable:
            ready[fd] = os.read(fd, 1) == b"r"
    return [ready.get(fd, False) for fd in fds]


async def stop_on_signal(server: Server) -> None:
    """In a worker: SIGTERM (or SIGINT) stops the server, closing every WebSocket with 1001; so does the
    supervisor's death (SIGKILL, a crash), so no worker outlives it holding the port. The handler stays
    installed until the server's tasks end, so a second signal during the shutdown cannot kill it midway."""
    supervisor = os.getppid()
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with anyio.create_task_group() as tg:

            async def on_signal() -> None:
                async for _ in signals:
                    break
                tg.cancel_scope.cancel()

            async def orphaned() -> None:
                while os.getppid() == supervisor:
                    await anyio.sleep(_POLL * 5)
                log.warning("worker %s: the supervisor (pid %d) is gone; stopping", worker_id(), supervisor)
                tg.cancel_scope.cancel()

            tg.start_soon(on_signal)
            tg.start_soon(orphaned)
        await server.stop(close_active=True)
        async for _ in signals:  # absorbed until the server's exit cancels this task
            pass


class _Worker:
    def __init__(self, number: int) -> None:
        self.number = number
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.pause = _RESTART_PAUSE_FIRST
        self.restart_at: float | None = None


class Supervisor:
    """Starts, watches and stops the workers of one server (see the module docstring)."""

    def __init__(self, server: Server, count: int, *, broker_given: bool = False) -> None:
        """``broker_given``: the server was made with ``broker=`` (else only ``[serve] broker`` can give one)."""
        self.server = server
        self.count = count
        self.broker_given = broker_given
        self.port = 0
        self._reservation: socket.socket | None = None
        self._workers = [_Worker(number) for number in range(count)]
        self._stopping = False
        self.restarts = 0

    def reserve_port(self) -> int:
        """Bind (never listen) the server's address with SO_REUSEPORT: workers join it, nobody else can."""
        options = self.server.options
        if options.unix is not None or not hasattr(socket, "SO_REUSEPORT"):
            raise ValueError("workers= needs a TCP port and SO_REUSEPORT (Linux, macOS, BSD)")
        family, kind, proto, _, address = socket.getaddrinfo(
            options.hostname, options.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        reservation = socket.socket(family, kind, proto)
        try:
            reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            reservation.bind(address)
        except BaseException:
            reservation.close()
            raise
        self._reservation = reservation
        self.port = int(reservation.getsockname()[1])
        return self.port

    def _spawn(self, worker: _Worker) -> int:
        """Start ``worker`` (this very program, run again); the read end of its ready pipe, to close."""
        read_end, write_end = os.pipe()
        environ = {
            **os.environ,
            WORKER_ID: str(worker.number),
            WORKER_PORT: str(self.port),
            READY_FD: str(write_end),
        }
        try:
            worker.process = subprocess.Popen(list(sys.orig_argv), env=environ, pass_fds=(write_end,))
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        worker.started = time.monotonic()
        worker.restart_at = None
        return read_end

    async def start(self) -> None:
        """Start the workers and return once each listens (so the printed URL answers at once)."""
        from rt import get_kernel

        if not self.broker_given and not get_kernel().config.get("serve.broker"):
            log.warning(
                "%d workers without a broker: publish reaches only the sockets of the worker that publishes; "
                "set [serve] broker (docs/scaling.md)",
                self.count,
            )
        fds = [self._spawn(worker) for worker in self._workers]
        try:
            ready = await anyio.to_thread.run_sync(_wait_ready, fds, _READY_TIMEOUT)
        finally:
            for fd in fds:
                os.close(fd)
        if not all(ready) and not self._stopping:  # (a signal stopping them all while they start is no error)
            await self.stop()
            failed = ", ".join(str(number) for number, ok in enumerate(ready) if not ok)
            raise RuntimeError(f"worker {failed} exited or hung before listening; see its output above")

    async def watch(self) -> None:
        """Restart workers that die; stop them all on SIGTERM/SIGINT to this process. Runs until the
        server's exit cancels it, so the signal handler stays installed through the whole shutdown."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._stop_on_signal)
            while True:
                if not self._stopping:
                    self._check()
                await anyio.sleep(_POLL)

    def _check(self) -> None:
        now = time.monotonic()
        for worker in self._workers:
            process = worker.process
            if worker.restart_at is not None:
                if now >= worker.restart_at:
                    self.restarts += 1
                    os.close(self._spawn(worker))
                continue
            if process is None or process.poll() is None:
                continue
            quick = now - worker.started < _QUICK_DEATH
            worker.pause = min(worker.pause * 2, _RESTART_PAUSE_MAX) if quick else _RESTART_PAUSE_FIRST
            delay = worker.pause if quick else 0.0
            log.warning(
                "worker %d (pid %d) exited with code %s; restarting it%s",
                worker.number,
                process.pid,
                process.returncode,
                f" in {delay:.1f} s" if delay else "",
            )
            worker.restart_at = now + delay

    async def _stop_on_signal(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                if not self._stopping:  # later signals are absorbed: the shutdown is under way
                    await self.server.stop()

    async def stop(self) -> None:
        """SIGTERM every worker, wait for them (SIGKILL after a while), release the port."""
        self._stopping = True
        running = [w.process for w in self._workers if w.process is not None and w.process.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT
        with anyio.CancelScope(shield=True):
            while any(process.poll() is None for process in running):
                if time.monotonic() > deadline:
                    for process in running:
                        if process.poll() is None:
                            log.warning(
                                "worker pid %d did not stop in %.0f s; killed", process.pid, _STOP_TIMEOUT
                            )
                            process.kill()
                            process.wait()
                    break
                await anyio.sleep(0.02)
        if self._reservation is not None:
            self._reservation.close()
            self._reservation = None

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process is not None and w.process.poll() is None]
