"""``rt test``'s warm server: one process per project folder and Python environment that has imported what
every run there imports first, and forks one child per ``rt test`` run (opt-in: ``RT_TEST_WARM=1`` or
``[test] warm = true``; docs/testing.md, "Warm start").

On a small suite most of a run is start-up that both runners pay every time: Python's, rt's (about 0.2 s of
CPU), ``import pytest`` and the installed plugins' modules (docs/benchmarks.md, "The fixed cost of `rt
test`"). A cold run that has the warm start turned on starts this server in the background when it ends
(:func:`spawn`); the server imports rt, the command's modules the cold run used, and, when that run's
pytest session loaded the installed plugins before any of the suite's code imported pytest, pytest and those
plugins' modules as the run imports them (marked for assert rewriting, through rt's rewriting finder). It
imports nothing of the project's own (no conftest.py, no test file, no plugin configured: a plugin's
``pytest_configure`` runs in each child, as in a cold run) and starts no thread.

Each run's client (:mod:`rt._warm`, the ``rt`` command's first step) connects to the server's socket and
sends its command line, working directory, environment, umask and ``sys.path``, with its standard streams'
descriptors attached (``SCM_RIGHTS``). The server checks the peer's uid (``SO_PEERCRED``) before it reads
anything, checks that nothing it imported could have changed (:class:`Stamps`), and forks: the child takes
the client's streams, folder, environment, umask and command line and runs ``rt.cli.main`` as a cold run
does from its first line, so outcomes, output and reports are a cold run's. The server waits for the child
and sends its status to the client, which exits with it. What has changed makes the server refuse the run
and exit (the client runs it itself, cold, and starts a new server): the Python executable, installed
distributions (the ``sys.path`` folders, their ``*.dist-info`` folders' RECORD files, ``.pth`` files), any
module file the server imported (rt's own version), the project's configuration files in the folder and
its parents (rt.toml, pyproject.toml, pytest.ini, .pytest.ini, tox.ini, setup.cfg). The environment
variables that change imports are part of the socket's key (:func:`rt._warm.key_material`).

The server exits after ``RT_TEST_WARM_IDLE`` seconds (600 by default) without a run, when its socket is no
longer its own, and when it finds itself stale. One server per key: it holds an exclusive ``flock`` on a lock
file next to its socket for its whole life (its pid written in it). Each run's cost from the fork to the exit
goes to ``KEY.runs`` next to it: pid, user and system CPU seconds, wall seconds, wait status
(bench/realsuites.py's warm column adds the CPU to the client's own).
"""

from __future__ import annotations

import gc
import io
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from rt import _warm

#: what a server's imports depend on in the project's folder and its parents
CONFIG_FILES = ("rt.toml", "pyproject.toml", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
#: seconds without a run before the server exits (``RT_TEST_WARM_IDLE`` overrides)
IDLE_S = 600.0
#: how often an idle server checks that its socket is still its own
_CHECK_S = 5.0
#: how long a client may take to send its request once connected
_REQUEST_S = 10.0


class Request:
    """One run asked for by a client: what the child becomes."""

    def __init__(self, payload: dict[str, Any], fds: list[int], conn: socket.socket) -> None:
        self.argv: list[str] = list(payload["argv"])
        self.cwd: str = payload["cwd"]
        self.env: dict[str, str] = dict(payload["env"])
        self.umask: int = int(payload["umask"])
        self.path: list[str] = list(payload["path"])
        self.orig_argv: list[str] = list(payload["orig_argv"])
        self.main: str | None = payload["main"]
        self.main_spec: str | None = payload["main_spec"]
        self.limits: dict[str, tuple[int, int]] = dict(payload["limits"])
        self.fds = fds
        self.conn = conn


class Stamps:
    """What the server's imports depend on, stamped (mtime, size, inode) when it started: a run is refused
    once any stamp differs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules = sorted(
            {
                file
                for module in list(sys.modules.values())
                if isinstance(file := getattr(module, "__file__", None), str) and os.path.isabs(file)
            }
        )
        self.folders = [entry for entry in dict.fromkeys(sys.path) if entry and os.path.isdir(entry)]
        self.taken = self.take()

    def take(self) -> list[tuple[str, tuple[int, int, int] | None]]:
        stamps = [(file, _stamp(file)) for file in self.modules]
        stamps.append((sys.executable, _stamp(sys.executable)))
        for folder in self.folders:
            stamps.append((folder, _stamp(folder)))
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(".dist-info"):
                    record = os.path.join(entry.path, "RECORD")
                    stamps.append((record, _stamp(record)))
                elif entry.name.endswith((".pth", ".egg-info", ".egg-link")):
                    stamps.append((entry.path, _stamp(entry.path)))
        for directory in (self.root, *self.root.parents):
            for name in CONFIG_FILES:
                file = str(directory / name)
                stamps.append((file, _stamp(file)))
        return stamps

    def changed(self) -> bool:
        return self.take() != self.taken


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    options = _options(args)
    if options is None:
        print("rt_testrunner.warm_server: started by `rt test` (RT_TEST_WARM), not by hand", file=sys.stderr)
        return 2
    _warm.IN_SERVER = True
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # the project's folder is not on the path of what the server imports
    root = Path(options["root"])
    os.chdir(root)
    material = _warm.key_material(str(root))
    path = _warm.socket_path(material)
    lock = _lock(path[: -len(".sock")] + ".lock")
    if lock is None:
        return 0  # another server has this key
    config_on = _import_what_runs_import(options, root)
    stamps = Stamps(root)
    listener = _listen(path)
    request = _serve(listener, path, material, stamps, config_on, lock)
    _become(request)
    from rt.cli import main as rt_main

    return rt_main()


def _options(args: list[str]) -> dict[str, Any] | None:
    options: dict[str, Any] = {"root": None, "modules": [], "pytest": False, "blocked": []}
    for arg in args:
        name, _, value = arg.partition("=")
        if name == "--root":
            options["root"] = value
        elif name == "--modules":
            options["modules"] = [part for part in value.split(",") if part]
        elif name == "--blocked":
            options["blocked"] = [part for part in value.split(",") if part]
        elif name == "--pytest":
            options["pytest"] = True
        else:
            return None
    return options if options["root"] else None


def _lock(path: str) -> int | None:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())  # who holds it (to stop a server by hand: kill PID)
    return fd


def _locked(path: str) -> bool:
    """A server holds this lock file."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _import_what_runs_import(options: dict[str, Any], root: Path) -> bool:
    """Import what a run here imports before its first test file; return whether the configuration file
    (not the environment variable) turns the warm start on."""
    import importlib

    from rt import _attrs_codecache

    gc.disable()

    _attrs_codecache.install()
    try:
        from rt.cli import build_parser
        from rt.kernel import Kernel

        saved = os.environ.pop(_warm.ENV, None)
        try:
            kernel = Kernel()
        finally:
            if saved is not None:
                os.environ[_warm.ENV] = saved
        config_on = bool(kernel.config.get("test.warm", False))
        build_parser(kernel, "test")
        for name in options["modules"]:
            if name.split(".")[0] in ("rt", "rt_testrunner"):
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 - a module a run imports only in some cases
                    continue
    finally:
        _attrs_codecache.uninstall()
    # rt's own start-up, frozen as a cold run freezes it (rt_testrunner.exiting.freeze_start_up); pytest and
    # the plugins are not: frozen objects are invisible to gc.get_referrers, which Hypothesis's
    # register_random reads (it warned about trio's module-level Random, as in forked --parallel workers)
    gc.freeze()
    gc.enable()
    if options["pytest"] and not _shadowed("pytest", root):
        _import_pytest_plugins(set(options["blocked"]), root)
    return config_on


def _shadowed(top: str, root: Path) -> bool:
    """The project's folder has a module or package of that name: the run may import the project's own."""
    return (root / top).is_dir() or (root / f"{top}.py").is_file() or (root / "src" / top).is_dir()


def _import_pytest_plugins(blocked: set[str], root: Path) -> None:
    """pytest, what its plugins leave imported, and the installed plugins' modules, imported as a run imports
    them (:meth:`rt_testrunner.pysession.PytestSession.load_plugins`: marked for rewriting, through rt's
    rewriting finder, which is taken off again: the run puts its own on with its settings)."""
    import pytest  # noqa: F401 - imported for the children

    from rt_testrunner import importing, pyplugins, startup_modules

    startup_modules.import_left_by_pytest(blocked)
    if os.environ.get(pyplugins.AUTOLOAD_OFF):
        return
    for entry in pyplugins.pytest11(every_distribution=True):
        top = entry.value.split(".")[0].split(":")[0].strip()
        if _shadowed(top, root):
            blocked.add(entry.name)  # the project's own code: never imported here
    finder = importing.install(["test_*.py", "*_test.py"])
    try:
        pyplugins.load_installed(blocked)
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        importing._FINDER = None  # noqa: SLF001 - the run installs its own


def _listen(path: str) -> socket.socket:
    """Bind under a name of its own, then take the socket's name (a rename: a client never meets a socket
    that does not listen yet)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = f"{path}.{os.getpid()}"
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass
    listener.bind(temporary)
    os.chmod(temporary, 0o600)
    listener.listen(16)
    os.rename(temporary, path)
    return listener


def _serve(
    listener: socket.socket, path: str, material: bytes, stamps: Stamps, config_on: bool, lock: int
) -> Request:
    """Answer clients until idle or stale; return only in a forked child, with its request."""
    inode = os.stat(path).st_ino
    log = os.open(path[: -len(".sock")] + ".runs", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    started: dict[int, float] = {}  # child pid -> when it was forked
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    runs: dict[int, socket.socket] = {}  # child pid -> its client's connection
    idle_s = _idle_seconds()
    last = time.monotonic()
    accepting = True

    def stop_accepting() -> None:
        nonlocal accepting
        if accepting:
            accepting = False
            selector.unregister(listener)
            _unlink_own(path, inode)
            listener.close()
            # the next server may start now (the run just refused starts it when it ends), while this one
            # still waits for its running children to report their status
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_UN)

    while True:
        if not accepting and not runs:
            _leave()
        timeout = None if runs else max(0.0, min(_CHECK_S, last + idle_s - time.monotonic()))
        events = selector.select(timeout)
        if not runs and time.monotonic() - last >= idle_s:
            stop_accepting()
            continue
        if accepting and not _still_own(path, inode):
            stop_accepting()
            continue
        for key, _ in events:
            if key.fileobj is listener:
                try:
                    conn, _address = listener.accept()
                except OSError:
                    continue
                forked = _answer(conn, material, stamps, config_on, runs, selector, stop_accepting)
                if forked is not None:
                    _close_all(selector, listener, runs, (wake_r, wake_w, lock, log), forked.conn)
                    return forked
                last = time.monotonic()
                started.update({pid: last for pid in runs if pid not in started})
            elif key.fileobj is wake_r:
                _drain(wake_r)
                _reap(runs, selector, started, log)
                last = time.monotonic()
            else:
                # a client's connection is readable: it went away (it sends nothing after its request)
                gone = key.fileobj
                for pid, held in list(runs.items()):
                    if held is gone:
                        try:
                            os.kill(pid, signal.SIGTERM)
                        except OSError:
                            pass
                selector.unregister(gone)


def _idle_seconds() -> float:
    try:
        return max(0.1, float(os.environ.get("RT_TEST_WARM_IDLE", IDLE_S)))
    except ValueError:
        return IDLE_S


def _still_own(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _unlink_own(path: str, inode: int) -> None:
    if _still_own(path, inode):
        try:
            os.unlink(path)
        except OSError:
            pass


def _answer(
    conn: socket.socket,
    material: bytes,
    stamps: Stamps,
    config_on: bool,
    runs: dict[int, socket.socket],
    selector: selectors.BaseSelector,
    stop_accepting: Any,
) -> Request | None:
    """Check the peer, read its request, refuse it or fork its child (returned in the child only)."""
    try:
        if _warm.peer_uid(conn) != os.getuid():
            conn.close()  # another user's process: nothing is read from it
            return None
        conn.settimeout(_REQUEST_S)
        request = _receive(conn)
    except (OSError, ValueError, EOFError, KeyError, TypeError):
        conn.close()
        return None
    if request is None:
        conn.close()
        return None
    refuse = request_key(request) != material or not (_warm.turned_on(request.env) or config_on)
    if not refuse and stamps.changed():
        refuse = True
        stop_accepting()  # stale: this server ends once its running children have
    if refuse:
        for fd in request.fds:
            os.close(fd)
        _send(conn, _warm.REFUSED, 0)
        conn.close()
        return None
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    pid = os.fork()
    if pid == 0:
        return request
    for fd in request.fds:
        os.close(fd)
    conn.settimeout(None)
    runs[pid] = conn
    selector.register(conn, selectors.EVENT_READ)
    _send(conn, _warm.FORKED, pid)
    return None


def request_key(request: Request) -> bytes:
    return _warm.key_material(request.cwd, request.env)


def _receive(conn: socket.socket) -> Request | None:
    import marshal

    data, fds, _flags, _address = socket.recv_fds(conn, 4 + 4096, 3)
    if len(data) < 4 or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    (size,) = struct.unpack("<I", data[:4])
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None
        body += chunk
    payload = marshal.loads(body)
    if not isinstance(payload, dict):
        for fd in fds:
            os.close(fd)
        return None
    try:
        return Request(payload, fds, conn)
    except (KeyError, TypeError, ValueError):
        for fd in fds:
            os.close(fd)
        raise


def _send(conn: socket.socket, kind: bytes, value: int) -> None:
    try:
        conn.sendall(kind + struct.pack("<i", value))
    except OSError:
        pass  # the client is gone


def _write(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode())
    except OSError:
        pass


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _reap(
    runs: dict[int, socket.socket], selector: selectors.BaseSelector, started: dict[int, float], log: int
) -> None:
    while runs:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = runs.pop(pid, None)
        if conn is None:
            continue
        wall = time.monotonic() - started.pop(pid, time.monotonic())
        # each run's cost, from the fork to the exit (its CPU clocks: the client's are its own)
        _write(log, f"{pid} {usage.ru_utime:.4f} {usage.ru_stime:.4f} {wall:.4f} {status}\n")
        _send(conn, _warm.EXITED, os.waitstatus_to_exitcode(status))
        try:
            selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()


def _close_all(
    selector: selectors.BaseSelector,
    listener: socket.socket,
    runs: dict[int, socket.socket],
    fds: tuple[int, ...],
    conn: socket.socket,
) -> None:
    """In a forked child: none of the server's machinery stays (the lock stays the server's: closing this
    copy of its descriptor does not release it)."""
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    selector.close()
    listener.close()
    for held in runs.values():
        held.close()
    runs.clear()
    for fd in fds:
        os.close(fd)
    conn.close()


def _become(request: Request) -> None:
    """The child becomes the client's run: its streams, folder, environment, umask, resource limits, path,
    command line and ``__main__``'s file, in a process group of its own (the client sends Ctrl-C to it)."""
    os.setpgid(0, 0)
    for target, fd in enumerate(request.fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    os.umask(request.umask)
    time.tzset()
    _resource_limits(request.limits)
    sys.argv = request.argv
    sys.orig_argv = request.orig_argv
    sys.path[:] = request.path
    _main_module(request.main, request.main_spec)
    _standard_streams()
    from rt_testrunner import exiting

    exiting.START_UP_FROZEN = True  # by the server, before it imported pytest and the plugins
    gc.enable()


def _resource_limits(limits: dict[str, tuple[int, int]]) -> None:
    import resource

    for name, (soft, hard) in limits.items():
        try:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        except (AttributeError, ValueError, OSError):
            pass  # above the server's hard limit: it keeps the server's (raising it needs privileges)


def _main_module(file: str | None, spec_name: str | None) -> None:
    """``__main__`` as the client's: a module of its file (the ``rt`` script) and spec (``python -m rt``'s
    ``rt.__main__``) that has not run, where the server's is this module run by ``-m``: multiprocessing's
    spawn runs ``__main__``'s file again in its workers, or imports its spec's module by name."""
    import importlib.util
    import types

    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    if file is not None:
        main.__file__ = file
    if spec_name is not None:
        try:
            main.__spec__ = importlib.util.find_spec(spec_name)
        except (ImportError, ValueError):
            pass
    sys.modules["__main__"] = main


def _standard_streams() -> None:
    """``sys.stdin``/``stdout``/``stderr`` made again on descriptors 0-2 as Python's start-up makes them
    (``create_stdio``): a terminal's stdout is line-buffered, stderr always is, ``-u`` writes through; the
    encoding and error handlers are the server's, which shares the client's locale variables (its key)."""
    # -u or PYTHONUNBUFFERED (in the key): the server's own stdout was made writing through
    buffered = not getattr(sys.stdout, "write_through", False)
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        write = fd != 0
        raw_buffering = 0 if (write and not buffered) else -1
        binary: Any = open(fd, "wb" if write else "rb", buffering=raw_buffering, closefd=False)
        raw = binary if raw_buffering == 0 else binary.raw
        try:
            raw.name = f"<{name}>"
        except AttributeError:
            pass
        try:
            tty = os.isatty(fd)
        except OSError:
            tty = False
        stream = io.TextIOWrapper(
            binary,
            encoding=getattr(old, "encoding", None) or "utf-8",
            errors=getattr(old, "errors", None) or "strict",
            newline="\n",
            line_buffering=buffered and (tty or fd == 2),
            write_through=not buffered,
        )
        stream.mode = "w" if write else "r"  # type: ignore[misc]
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _leave() -> NoReturn:
    os._exit(0)


# -- the cold run's side -----------------------------------------------------------------------------------------


def spawn(root: Path, environ: dict[str, str], preload_pytest: bool, blocked: Sequence[str]) -> None:
    """Start the server for ``root`` in the background, in a session of its own with no terminal, with the
    environment the run started with; nothing when one already listens (its lock makes a second one exit)."""
    if _warm.IN_SERVER or not _warm.supported():
        return
    try:
        path = _warm.socket_path(_warm.key_material(str(root), environ), environ)
    except OSError:
        return
    if _locked(path[: -len(".sock")] + ".lock"):
        return  # a server lives (stale or not: a stale one is on its way out, the next cold run starts one)
    import subprocess

    from rt_testrunner.exiting import START_UP_MODULES

    # rt's modules the run had imported when its start-up was frozen, before the suite's first file
    modules = sorted(
        name for name in START_UP_MODULES if name == "rt" or name.startswith(("rt.", "rt_testrunner."))
    )
    args = [
        sys.executable,
        "-m",
        "rt_testrunner.warm_server",
        f"--root={root}",
        f"--modules={','.join(modules)}",
    ]
    if preload_pytest:
        args += ["--pytest", f"--blocked={','.join(sorted(blocked))}"]
    try:
        subprocess.Popen(
            args,
            cwd=root,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
