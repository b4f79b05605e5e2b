"""The client side of ``rt test``'s warm start (opt-in: ``RT_TEST_WARM=1`` or ``[test] warm = true``).

A warm server (:mod:`rt_testrunner.warm_server`) is a process per project folder and Python environment
that has already imported rt, its test runner and, for a pytest suite, pytest and the installed plugins'
modules; it forks one child per ``rt test`` run, which then runs exactly as a cold ``rt test`` would, with
this process's command line, working directory, environment, umask and standard streams (the descriptors
themselves, passed over the socket with ``SCM_RIGHTS``, so the child's ``isatty``, colours and terminal size
are this terminal's). This module is what the ``rt`` command runs before anything else when the command is
``test``: it costs an interpreter's start-up and this module, no attrs, no argparse, no plugin. When no
server answers, or the server refuses (what it imported may have changed), the caller runs the command
itself, as always: a warm run is never a stale one.

Here live the parts both sides must agree on: the key of a server (the working directory, the executable,
its prefix, the interpreter's flags and the environment variables that change what an import finds), the
per-user folder of mode 0700 that holds its socket, and the messages.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing would cost the client more than its own work
if TYPE_CHECKING:
    import _socket
    from collections.abc import Sequence

#: the commands a warm server runs (the test runner's)
COMMANDS = ("test",)
#: the environment variable that turns the warm start on (1) or off (0); unset: the config file says
ENV = "RT_TEST_WARM"
#: environment variables a server's imports depend on: they are part of its key, so a run with other values
#: never meets a server started with these
KEY_PREFIXES = ("PYTHON", "PYTEST_", "LC_")
KEY_NAMES = ("LANG", "HOME", "TMPDIR", "RT_DISABLE_PLUGINS", "VIRTUAL_ENV")
#: answers of the server: R refused (run it yourself), P the child's pid follows, X its exit status follows
REFUSED, FORKED, EXITED = b"R", b"P", b"X"
#: True in a warm server and its children: they never ask a server themselves
IN_SERVER = False
#: True once this process has asked (rt._launch): rt.cli.main does not ask again
ASKED = False


def first_positional(argv: Sequence[str]) -> int | None:
    """The index of the command line's first word that is not an option (nor ``--backend``'s value)."""
    skip_next = False
    for index, arg in enumerate(argv):
        if skip_next:
            skip_next = False
            continue
        if arg == "--backend":
            skip_next = True
            continue
        if arg.startswith("-"):
            continue
        return index
    return None


def command(argv: Sequence[str]) -> str | None:
    """The command ``rt ARGV`` names (its first positional word), read before argparse is imported."""
    index = first_positional(argv)
    return None if index is None else argv[index]


def turned_off(environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    return environ.get(ENV, "").strip().lower() in ("0", "false", "no", "off")


def turned_on(environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    return environ.get(ENV, "").strip().lower() in ("1", "true", "yes", "on")


def supported() -> bool:
    """Linux only: the server checks each peer's uid with ``SO_PEERCRED`` and forks without exec."""
    import _socket

    return sys.platform.startswith("linux") and hasattr(_socket, "SO_PEERCRED") and hasattr(os, "fork")


def key_material(cwd: str, environ: os._Environ[str] | dict[str, str] = os.environ) -> bytes:
    """What a server must share with a run that uses it, as bytes (compared whole by the server)."""
    names = sorted(name for name in environ if name.startswith(KEY_PREFIXES) or name in KEY_NAMES)
    return repr(  # not marshal: its bytes depend on which strings are shared objects
        (
            cwd,
            sys.executable,
            sys.prefix,
            tuple(sys.flags),
            sorted(sys._xoptions.items()),
            [(name, environ[name]) for name in names],
        )
    ).encode("utf-8", "surrogateescape")


def folder(environ: os._Environ[str] | dict[str, str] = os.environ, create: bool = True) -> str:
    """The per-user folder of the sockets, made with mode 0700 when missing (``create``; the client only looks): ``$XDG_RUNTIME_DIR/rt-warm`` (a
    folder only its user can enter), else ``rt-warm-UID`` in the temporary folder. A folder that is not this
    user's, is a symbolic link, or lets anyone else in is refused (an error)."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        path = os.path.join(runtime, "rt-warm")
    else:
        base = environ.get("TMPDIR") or "/tmp"
        path = os.path.join(base, f"rt-warm-{os.getuid()}")
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    info = os.lstat(path)  # FileNotFoundError (an OSError) when not made and missing: no server
    is_folder = info.st_mode & 0o170000 == 0o040000  # stat.S_ISDIR, without importing stat
    if not is_folder or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{path} is not a folder of mode 0700 owned by this user")
    return path


def socket_path(
    material: bytes, environ: os._Environ[str] | dict[str, str] = os.environ, create: bool = True
) -> str:
    """The server's socket for ``material``: a short hash names it (a socket path has at most 107 bytes); two
    keys of one hash are told apart by the server, which compares the material itself."""
    import zlib

    digest = f"{zlib.crc32(material):08x}{zlib.adler32(material):08x}"
    return os.path.join(folder(environ, create), f"{digest}.sock")


def peer_uid(sock: _socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (``SO_PEERCRED``: pid, uid, gid)."""
    import _socket
    import struct

    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def attempt(argv: list[str]) -> int | None:
    """Run ``rt ARGV`` in a warm server's child and return its exit status; None when this process must run
    it itself (not opted in, no server, a refusal, an unsupported platform). The client uses ``_socket``
    and ``_signal``, not their Python modules: those build enums of every constant when imported, which
    was a fifth of the client's instructions."""
    if IN_SERVER or ASKED or turned_off() or not supported():
        return None
    import _socket

    cwd = os.getcwd()
    material = key_material(cwd)
    try:
        path = socket_path(material, create=False)  # every `rt test` asks: only a server makes the folder
    except OSError:
        return None
    if not os.path.exists(path):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        if peer_uid(sock) != os.getuid():
            return None
        return _run(sock, material, argv, cwd)
    except OSError:
        return None
    finally:
        sock.close()


def _run(sock: _socket.socket, material: bytes, argv: list[str], cwd: str) -> int | None:
    import _socket
    import marshal
    import struct

    umask = os.umask(0)
    os.umask(umask)
    request = marshal.dumps(
        {
            "key": material,
            "argv": [sys.argv[0] if sys.argv else "rt", *argv],
            "cwd": cwd,
            "env": dict(os.environ),
            "umask": umask,
            "path": list(sys.path),
            "orig_argv": list(sys.orig_argv),
            "main": getattr(sys.modules.get("__main__"), "__file__", None),
            "main_spec": getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None),
            "limits": _limits(),
        }
    )
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    header = struct.pack("<I", len(request))
    # the first bytes carry the three standard descriptors (socket.send_fds, without the socket module)
    fds = struct.pack("3i", 0, 1, 2)
    sock.sendmsg([header + request[:4096]], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    if len(request) > 4096:
        sock.sendall(request[4096:])
    answer = _read(sock, 5)
    if answer is None or answer[:1] != FORKED:
        return None
    pid = struct.unpack("<i", answer[1:])[0]
    return _wait(sock, pid)


#: the resource limits a run inherits from its shell (``ulimit``), given to the child
LIMITS = (
    "RLIMIT_NOFILE",
    "RLIMIT_STACK",
    "RLIMIT_AS",
    "RLIMIT_DATA",
    "RLIMIT_CORE",
    "RLIMIT_CPU",
    "RLIMIT_NPROC",
)


def _limits() -> dict[str, tuple[int, int]]:
    import resource

    return {name: resource.getrlimit(getattr(resource, name)) for name in LIMITS if hasattr(resource, name)}


def _read(sock: _socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except InterruptedError:
            continue
        if not chunk:
            return None
        data += chunk
    return data


def _wait(sock: _socket.socket, pid: int) -> int:
    """Forward the signals a terminal sends (Ctrl-C, hang-up, termination) to the child, wait for its
    status; the child's death by a signal is this process's."""
    import _signal  # type: ignore[import-not-found]  # signal's C module: no stubs
    import struct

    def forward(signum: int, _frame: object) -> None:
        # to the child's process group, as a terminal's Ctrl-C reaches the processes a test started too
        try:
            os.killpg(pid, signum)
        except OSError:
            try:
                os.kill(pid, signum)
            except OSError:
                pass

    for signum in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT):
        _signal.signal(signum, forward)
    answer = _read(sock, 5)
    if answer is None or answer[:1] != EXITED:
        # the server ended before the child: wait for the child, whose status nobody can tell any more
        import time

        while True:
            try:
                os.kill(pid, 0)
            except OSError:
                break
            time.sleep(0.05)
        sys.stderr.write("rt test: the warm server ended during the run; its exit status is unknown\n")
        return 1
    status = int(struct.unpack("<i", answer[1:])[0])
    if status < 0:
        _signal.signal(-status, _signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status
    return status
