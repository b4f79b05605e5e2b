"""``rt test``'s warm start (RT_TEST_WARM, rt_testrunner.warm_server): a run forked from the warm server gives
what the same run gives cold (output, exit status, JUnit), and the server never gives a stale one.

Each test runs small projects written into ``tmp_path`` cold (``RT_TEST_WARM=0``) and warm, with the sockets
in a folder of its own (``XDG_RUNTIME_DIR``), and stops the servers it started. A test of the project
writes ``os.getpid()`` into ``pids.txt``: a warm run's test runs in a process other than the ``rt`` client's.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rt.testing import cli_environ, write_files

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the warm start is Linux only")

TIMING = re.compile(r"\[\d+(\.\d+)?m?s\]")
PROGRESS = re.compile(r"\r?\x1b\[2K[^\r\n]*")
JUNIT_VOLATILE = re.compile(r'(time|timestamp|hostname)="[^"]*"')

PROJECT = {
    "pyproject.toml": """\
        [tool.pytest.ini_options]
        addopts = "-ra"
        markers = ["slow: slow tests"]
    """,
    "conftest.py": """\
        import pytest

        @pytest.fixture
        def number():
            return 41
    """,
    "test_one.py": """\
        import os
        import sys

        import pytest

        def test_records_its_process():
            with open("pids.txt", "a") as pids:
                pids.write(f"{os.getpid()}\\n")

        def test_fixture(number):
            print("printed by a failing test")
            assert number + 1 == 43

        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_param(x):
            assert x

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass

        @pytest.mark.xfail(strict=True)
        def test_xfail():
            assert 0

        def test_streams_are_the_clients():
            streams = [
                (s.name, s.mode, s.isatty(), s.encoding, s.errors, s.line_buffering, s.write_through)
                for s in (sys.__stdin__, sys.__stdout__, sys.__stderr__)
            ]
            with open("streams.txt", "a") as record:
                record.write(f"{streams}\\n")
            assert os.environ["WARM_TEST_VARIABLE"] == "here"
            assert os.getcwd() == os.environ["WARM_TEST_CWD"]
            assert oct(os.umask(0o022)) == oct(0o027)
    """,
}


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short folder for the sockets (a socket's path has at most 107 bytes); every server it holds is
    stopped at the end."""
    folder = Path(tempfile.mkdtemp(prefix="rtw"))
    folder.chmod(0o700)
    try:
        yield folder
    finally:
        for lock in (folder / "rt-warm").glob("*.lock"):
            pid = _pid(lock)
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        shutil.rmtree(folder, ignore_errors=True)


def _pid(lock: Path) -> int | None:
    try:
        text = lock.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def environ(runtime: Path, project: Path, warm: str = "1", **extra: str) -> dict[str, str]:
    return cli_environ(
        {
            "XDG_RUNTIME_DIR": str(runtime),
            "RT_TEST_WARM": warm,
            "RT_TEST_WARM_IDLE": "60",
            "WARM_TEST_VARIABLE": "here",
            "WARM_TEST_CWD": str(project),
            **extra,
        }
    )


def start(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``rt test ARGS`` started in ``project`` with umask 027 (a test of PROJECT checks the run has it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "rt", "test", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0o027),
    )


def rt_test(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    process = start(project, env, *args)
    out, err = process.communicate(timeout=300)
    result = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    result.pid = process.pid  # type: ignore[attr-defined]
    return result


def server_pid(runtime: Path, timeout: float = 60.0, other_than: int = 0) -> int:
    """The pid of the one server listening under ``runtime`` (other than ``other_than``), once it listens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        socks = list((runtime / "rt-warm").glob("*.sock")) if (runtime / "rt-warm").is_dir() else []
        if socks:
            pid = _pid(socks[0].with_suffix(".lock"))
            if pid and pid != other_than:
                return pid
        time.sleep(0.05)
    raise AssertionError("no warm server started")


def wait_gone(pid: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # a zombie of nobody's: it is gone as far as anyone can use it
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return
        except OSError:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not end")


def pids(project: Path) -> list[int]:
    path = project / "pids.txt"
    found = [int(line) for line in path.read_text().split()] if path.exists() else []
    path.unlink(missing_ok=True)
    return found


def same_run(cold: subprocess.CompletedProcess[str], warm: subprocess.CompletedProcess[str]) -> None:
    assert warm.returncode == cold.returncode
    assert TIMING.sub("", warm.stdout) == TIMING.sub("", cold.stdout)
    assert TIMING.sub("", warm.stderr) == TIMING.sub("", cold.stderr)


def test_a_warm_run_is_a_cold_one_forked_from_the_server(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", PROJECT)
    env = environ(runtime, project)
    cold = rt_test(
        project, environ(runtime, project, warm="0"), "--reporter=junit", "--reporter-outfile=c.xml"
    )
    assert pids(project) == [cold.pid]  # type: ignore[attr-defined]
    first = rt_test(project, env, "--reporter=junit", "--reporter-outfile=c.xml")
    server = server_pid(runtime)
    assert pids(project) == [first.pid]  # type: ignore[attr-defined]
    same_run(cold, first)
    time.sleep(1)
    assert list((runtime / "rt-warm").glob("*.sock")) != [], "only the run with RT_TEST_WARM=1 starts one"
    warm = rt_test(project, env, "--reporter=junit", "--reporter-outfile=w.xml")
    [warm_pid] = pids(project)
    assert warm_pid not in (warm.pid, server)  # type: ignore[attr-defined]
    same_run(cold, warm)
    assert " 1 fail" in warm.stderr and "printed by a failing test" in warm.stderr
    cold_streams, first_streams, warm_streams = (project / "streams.txt").read_text().splitlines()
    assert cold_streams == first_streams == warm_streams
    assert JUNIT_VOLATILE.sub("", (project / "w.xml").read_text()) == JUNIT_VOLATILE.sub(
        "", (project / "c.xml").read_text()
    )
    assert server_pid(runtime) == server
    folder = runtime / "rt-warm"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert all(path.stat().st_mode & 0o077 == 0 for path in folder.iterdir())


ASYNC_PROJECT = {
    "test_async.py": """\
        import os

        import anyio
        import sniffio
        from rt.test import test, expect

        @test("sleeps on the chosen backend")
        async def _():
            await anyio.sleep(0)
            with open("pids.txt", "a") as pids:
                pids.write(f"{os.getpid()}\\n")
            print(sniffio.current_async_library(), os.environ.get("WARM_TEST_VARIABLE"))
            expect(sniffio.current_async_library()).to_be("nothing")
    """,
}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_async_tests_run_warm_on_their_backend(tmp_path: Path, runtime: Path, backend: str) -> None:
    project = write_files(tmp_path / "project", ASYNC_PROJECT)
    env = environ(runtime, project)
    cold = rt_test(project, environ(runtime, project, warm="0"), "--backend", backend)
    rt_test(project, env, "--backend", backend)
    server_pid(runtime)
    pids(project)
    warm = rt_test(project, env, "--backend", backend)
    [pid] = pids(project)
    assert f"Received: '{backend}'" in warm.stderr
    same_run(cold, warm)
    assert pid != 0


def test_a_changed_configuration_or_installed_package_restarts_the_server(
    tmp_path: Path, runtime: Path
) -> None:
    project = write_files(tmp_path / "project", PROJECT)
    site = tmp_path / "site"
    site.mkdir()
    env = environ(runtime, project, PYTHONPATH=str(site))
    rt_test(project, env)
    first = server_pid(runtime)
    pids(project)
    (project / "pyproject.toml").write_text(PROJECT["pyproject.toml"].replace("-ra", "-rA"))
    changed = rt_test(project, env)
    [pid] = pids(project)
    wait_gone(first)
    assert "1 fail" in changed.stderr
    second = server_pid(runtime, other_than=first)
    rt_test(project, env)
    [pid] = pids(project)
    assert pid != 0
    # a distribution installed where the runs import from
    record = site / "newly_installed-1.0.dist-info"
    record.mkdir()
    (record / "RECORD").write_text("newly_installed.py,,\n")
    rt_test(project, env)
    pids(project)
    wait_gone(second)
    server_pid(runtime, other_than=second)


def test_two_runs_at_once(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", PROJECT)
    env = environ(runtime, project)
    cold = rt_test(project, environ(runtime, project, warm="0"))
    rt_test(project, env)
    server_pid(runtime)
    pids(project)
    both = [start(project, env) for _ in range(2)]
    for process in both:
        out, err = process.communicate(timeout=300)
        same_run(cold, subprocess.CompletedProcess(process.args, process.returncode, out, err))
    assert len(set(pids(project))) == 2


def test_a_killed_server_leaves_the_next_run_cold_and_a_new_server(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", PROJECT)
    env = environ(runtime, project)
    cold = rt_test(project, environ(runtime, project, warm="0"))
    rt_test(project, env)
    server = server_pid(runtime)
    os.kill(server, signal.SIGKILL)
    wait_gone(server)
    pids(project)
    again = rt_test(project, env)
    same_run(cold, again)
    server_pid(runtime, other_than=server)


EXITING = {
    "test_exits.py": """\
        import os
        import time

        def test_first():
            pass

        def test_exits_hard():
            if os.environ.get("WARM_TEST_EXIT"):
                os._exit(7)

        def test_waits():
            if os.environ.get("WARM_TEST_WAIT"):
                with open("started", "w") as started:
                    started.write(str(os.getpid()))
                time.sleep(60)

        def test_last():
            pass
    """,
}


def test_os_exit_in_a_test_is_the_runs_status(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", EXITING)
    env = environ(runtime, project, WARM_TEST_EXIT="1")
    cold = rt_test(project, environ(runtime, project, warm="0", WARM_TEST_EXIT="1"))
    assert cold.returncode == 7
    rt_test(project, environ(runtime, project))  # a run that ends, and so starts the server
    server = server_pid(runtime)
    warm = rt_test(project, env)
    same_run(cold, warm)
    assert server_pid(runtime) == server  # the server is not the child: it lives on


def interrupted(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    started = project / "started"
    started.unlink(missing_ok=True)
    process = start(project, env)
    deadline = time.monotonic() + 120
    # the test has written its pid and closed the file once it is readable; a moment more and it sleeps, so
    # Ctrl-C lands on the same line in every run (under load it could land on the open() line)
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert started.read_text()
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_ctrl_c_in_the_client_stops_the_run_with_a_summary(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", EXITING)
    cold = interrupted(project, environ(runtime, project, warm="0", WARM_TEST_WAIT="1"))
    env = environ(runtime, project, WARM_TEST_WAIT="1")
    interrupted(project, env)
    server = server_pid(runtime)
    warm = interrupted(project, env)
    same_run(cold, warm)
    assert "Interrupted" in warm.stderr and " 2 pass" in warm.stderr
    assert server_pid(runtime) == server


def test_a_stale_server_busy_with_a_run_lets_the_next_server_start(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", {**EXITING, "tox.ini": "[pytest]\n"})
    waiting = environ(runtime, project, WARM_TEST_WAIT="1")
    rt_test(project, environ(runtime, project))
    first = server_pid(runtime)
    started = project / "started"
    long_run = start(project, waiting)
    deadline = time.monotonic() + 120
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    (project / "tox.ini").write_text("[pytest]\naddopts = -ra\n")
    refused = rt_test(project, environ(runtime, project))  # cold: the server is stale
    assert refused.returncode == 0
    # the stale server still serves the long run, and the next one listens already
    assert server_pid(runtime, other_than=first) != first
    assert long_run.poll() is None
    long_run.send_signal(signal.SIGINT)
    long_run.communicate(timeout=120)
    wait_gone(first)


def test_a_killed_client_ends_its_run(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", EXITING)
    env = environ(runtime, project, WARM_TEST_WAIT="1")
    interrupted(project, env)
    server = server_pid(runtime)
    started = project / "started"
    started.unlink()
    client = start(project, env)
    deadline = time.monotonic() + 120
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(started.read_text())
    assert child != client.pid
    client.kill()
    client.communicate(timeout=60)
    wait_gone(child)  # the server ends the run of a client that went away
    assert server_pid(runtime) == server


def test_the_socket_folder_must_be_private(tmp_path: Path) -> None:
    from rt import _warm

    shared = tmp_path / "rt-warm"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with pytest.raises(PermissionError, match="mode 0700"):
        _warm.folder({"XDG_RUNTIME_DIR": str(tmp_path)})
    shared.chmod(0o700)
    assert _warm.folder({"XDG_RUNTIME_DIR": str(tmp_path)}) == str(shared)


@pytest.mark.skipif(os.getuid() != 0, reason="another uid's process needs root to make")
def test_the_server_reads_nothing_from_another_user(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", PROJECT)
    env = environ(runtime, project)
    rt_test(project, env)
    server = server_pid(runtime)
    [sock] = (runtime / "rt-warm").glob("*.sock")
    # another user may not even reach the folder: let it, to see that the server itself refuses
    runtime.chmod(0o711)
    (runtime / "rt-warm").chmod(0o711)
    sock.chmod(0o777)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        try:
            os.setuid(65534)
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(str(sock))
            try:
                socket.send_fds(client, [b"\x00\x00\x00\x00"], [0, 1, 2])
            except (BrokenPipeError, ConnectionResetError):  # under load the server refused before the send
                os._exit(0)
            client.settimeout(30)
            try:
                answer = client.recv(5)
            except ConnectionResetError:  # closed with the request unread
                answer = b""
            os._exit(0 if answer == b"" else 1)
        except BaseException as exc:  # what went wrong, for the assertion below
            os.write(write_end, repr(exc).encode())
            os._exit(2)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_end) as errors:
        assert (errors.read(), os.waitstatus_to_exitcode(status)) == ("", 0)
    assert server_pid(runtime) == server


def on_a_terminal(project: Path, env: dict[str, str]) -> tuple[int, bytes]:
    """``rt test`` with a pseudo-terminal of 100 columns as its stdout and stderr: its status and output."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "rt", "test"],
        cwd=project,
        env=env,
        stdout=follower,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0o027),
    )
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    return process.wait(timeout=300), output


def test_a_terminals_colours_and_size_are_the_clients(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", PROJECT)
    plain = {
        key: value for key, value in environ(runtime, project).items() if key not in ("COLUMNS", "LINES")
    }
    cold_status, cold = on_a_terminal(project, {**plain, "RT_TEST_WARM": "0"})
    on_a_terminal(project, plain)
    server_pid(runtime)
    warm_status, warm = on_a_terminal(project, plain)
    # the progress line shows after a second or so, which a warm run may not need: it is left out
    cold_text, warm_text = (PROGRESS.sub("", TIMING.sub("", text.decode())) for text in (cold, warm))
    assert "\x1b[" in cold_text  # colours: the console reporter saw a terminal
    assert warm_status == cold_status
    assert warm_text == cold_text
    terminal_streams = (project / "streams.txt").read_text().splitlines()
    assert len(set(terminal_streams)) == 1 and "True" in terminal_streams[0]


SPAWNING = {
    "test_spawn.py": """\
        import multiprocessing
        import os
        import subprocess
        import sys

        def double(number):
            return number * 2

        def test_a_spawned_pool_runs_this_modules_function():
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                assert pool.map(double, [1, 2]) == [2, 4]

        def test_main_and_argv():
            import __main__

            with open("main.txt", "a") as record:
                record.write(f"{getattr(__main__, '__file__', None)} {__main__.__spec__ and __main__.__spec__.name} ")
                record.write(f"{sys.argv} {sys.orig_argv[1:]} {os.getpgid(0) == os.getpid()}\\n")
    """,
}


def test_multiprocessing_spawn_and_main_are_the_clients(tmp_path: Path, runtime: Path) -> None:
    project = write_files(tmp_path / "project", SPAWNING)
    env = environ(runtime, project)
    cold = rt_test(project, environ(runtime, project, warm="0"), "-k", "spawn or main")
    rt_test(project, env, "-k", "spawn or main")
    server_pid(runtime)
    warm = rt_test(project, env, "-k", "spawn or main")
    same_run(cold, warm)
    assert " 2 pass" in warm.stderr
    cold_main, first_main, warm_main = (project / "main.txt").read_text().splitlines()
    assert warm_main == cold_main.replace("False", "True")  # its own process group, to pass Ctrl-C on


def server_arguments(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@pytest.mark.parametrize(
    ("files", "preloaded"),
    [
        # a filter naming pytest's category: rt imports pytest itself, before the plugins and the suite
        ({"pytest.ini": "[pytest]\nfilterwarnings = ignore::pytest.PytestRemovedIn10Warning\n"}, True),
        # no configuration, no conftest.py, no test file naming pytest: a helper module imports it first
        ({"test_a.py": "import helper\n\ndef test_a():\n    assert helper.NAME\n"}, False),
    ],
)
def test_pytest_is_imported_by_the_server_only_where_it_comes_before_the_suite(
    tmp_path: Path, runtime: Path, files: dict[str, str], preloaded: bool
) -> None:
    default = {
        "test_a.py": "import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_a(x):\n    pass\n",
        "helper.py": "import pytest\n\nNAME = pytest.__name__\n",
        "test_b.py": "def test_b():\n    pass\n",
    }
    project = write_files(tmp_path / "project", {**default, **files})
    env = environ(runtime, project)
    cold = rt_test(project, environ(runtime, project, warm="0"))
    rt_test(project, env)
    server = server_pid(runtime)
    assert ("--pytest" in server_arguments(server)) is preloaded
    same_run(cold, rt_test(project, env))
