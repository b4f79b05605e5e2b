"""The event stream reporters consume, the registered reporters, and the compiled-file cache."""

from __future__ import annotations

import io
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from rt.events import (
    FileFinished,
    FileStarted,
    RunFinished,
    RunStarted,
    TestFinished,
    TestStarted,
    TestStatus,
)
from rt.interfaces import ReporterOptions
from rt_testrunner.discovery import discover
from rt_testrunner.rewrite import compile_test_file
from rt_testrunner.runner import Runner, RunOptions


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.closed = False

    def handle(self, event: Any) -> None:
        self.events.append(event)

    def close(self) -> None:
        self.closed = True


def run_in_process(root: Path, **options: Any) -> Recorder:
    recorder = Recorder()
    runner = Runner(RunOptions(root=root, **options), [recorder])
    finished = runner.run_sync(discover(root, []))
    assert recorder.events[-1] is finished
    return recorder


def test_event_order_and_fields(tmp_path: Path) -> None:
    (tmp_path / "e.test.py").write_text(
        "from rt.test import test, describe, expect\n"
        "with describe('group'):\n"
        "    test('ok', lambda: expect(1).to_be(1))\n"
        "    test('bad', lambda: expect(1).to_be(2))\n"
        "attempts = []\n"
        "test('flaky', lambda: attempts.append(1) or expect(len(attempts)).to_be(2), retry=1)\n"
        "test.skip('skipped', lambda: None)\n"
    )
    events = run_in_process(tmp_path).events
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "RunStarted",
        "FileStarted",
        "TestStarted",
        "TestFinished",
        "TestStarted",
        "TestFinished",
        "TestStarted",
        "TestStarted",
        "TestFinished",
        "TestFinished",
        "FileFinished",
        "RunFinished",
    ]
    started = events[0]
    assert isinstance(started, RunStarted) and started.files == ["e.test.py"] and started.seed is None
    assert isinstance(events[1], FileStarted) and events[1].file == "e.test.py"
    ok, bad = events[3], events[5]
    assert isinstance(ok, TestFinished) and ok.path == ("group", "ok") and ok.status is TestStatus.PASS
    assert ok.expect_calls == 1 and ok.location is not None and ok.location.file == "e.test.py"
    assert ok.location.line == 3
    assert isinstance(bad, TestFinished) and bad.status is TestStatus.FAIL and bad.failure is not None
    assert bad.failure.kind == "ExpectationError" and "Expected: 2" in bad.failure.details
    assert bad.failure.location is not None and bad.failure.location.line == 4
    retried_started = [e for e in events if isinstance(e, TestStarted) and e.path == ("flaky",)]
    assert [e.attempt for e in retried_started] == [1, 2]
    flaky = events[8]
    assert isinstance(flaky, TestFinished) and flaky.attempt == 2 and flaky.status is TestStatus.PASS
    assert isinstance(events[9], TestFinished) and events[9].status is TestStatus.SKIP
    assert isinstance(events[10], FileFinished) and events[10].error is None
    finished = events[11]
    assert isinstance(finished, RunFinished)
    assert (finished.passed, finished.failed, finished.skipped, finished.todo, finished.files) == (
        2,
        1,
        1,
        0,
        1,
    )
    assert finished.tests == 4 and not finished.bailed
    assert finished.expect_calls == 3  # a retried test counts the expect() calls of its final attempt


def test_file_error_is_reported_on_file_finished(tmp_path: Path) -> None:
    (tmp_path / "x.test.py").write_text("import no_such_module_here\n")
    events = run_in_process(tmp_path).events
    finished = next(e for e in events if isinstance(e, FileFinished))
    assert finished.error is not None and finished.error.kind == "ModuleNotFoundError"
    assert events[-1].errors == 1 and events[-1].failed == 0  # not a test: an error (REFERENCE.md)


def test_async_code_runs_in_one_loop_for_the_whole_run(tmp_path: Path) -> None:
    (tmp_path / "a.test.py").write_text(
        "import threading\nfrom rt.test import test, before_all, expect\n"
        "loops = []\n"
        "@before_all\nasync def _():\n    loops.append(threading.get_ident())\n"
        "@test('async')\nasync def _():\n    expect(threading.get_ident()).to_be(loops[0])\n"
    )
    (tmp_path / "b.test.py").write_text(
        "import threading, sys\nfrom rt.test import test, expect\n"
        "@test('same loop thread in another file')\nasync def _():\n"
        "    expect(threading.get_ident()).to_be(sys.modules['rt_test_files.a_test'].loops[0])\n"
    )
    events = run_in_process(tmp_path, timeout_ms=5000).events
    assert events[-1].passed == 2, [e.failure for e in events if isinstance(e, TestFinished)]


def test_sync_suites_never_import_the_event_loop(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "s.test.py").write_text(
        "import sys\nfrom rt.test import test\n"
        "test('no loop', lambda: print('ANYIO_LOADED', 'anyio' in sys.modules, 'asyncio' in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "rt", "test"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    ).stdout
    assert "ANYIO_LOADED False False" in out


def test_console_and_dots_are_registered_reporters(rt_kernel: Any) -> None:
    reporters = rt_kernel.host.reporters()
    assert {"console", "dots"} <= set(reporters)
    stream = io.StringIO()
    console = reporters["console"].value(ReporterOptions(stream=stream))
    console.handle(FileStarted("f.test.py"))
    console.handle(TestFinished("f.test.py", ("a", "b"), TestStatus.PASS, 0.00123, attempt=2, run=3))
    console.handle(FileFinished("f.test.py", 0.1))
    console.handle(RunFinished(1, 0, 0, 0, 1, 1, 0.05, seed=9))
    console.close()
    assert stream.getvalue() == (
        "\nf.test.py:\n(pass) a > b (attempt 2) (run 3) [1.23ms]\n"
        "\n --seed=9\n 1 pass\n 0 fail\n 1 expect() calls\nRan 1 test across 1 file. [50.00ms]\n"
    )


def test_compiled_files_are_cached_and_invalidated(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    source = tmp_path / "c_test.py"
    source.write_text("VALUE = 1\n")
    namespace: dict[str, Any] = {}
    exec(compile_test_file(source), namespace)  # noqa: S102
    cached = list((tmp_path / "__pycache__").glob("c_test.*rt-test*.pyc"))
    assert len(cached) == 1 and namespace["VALUE"] == 1
    source.write_text("VALUE = 22\n")
    exec(compile_test_file(source), namespace)  # noqa: S102
    assert namespace["VALUE"] == 22


def test_cache_of_a_moved_tree_is_not_reused(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "a").mkdir()
    source = tmp_path / "a" / "m_test.py"
    source.write_text("VALUE = 1\n")
    assert compile_test_file(source).co_filename == str(source)
    moved = tmp_path / "b"
    shutil.copytree(tmp_path / "a", moved)  # copy2: same mtime and size, cache copied along
    assert compile_test_file(moved / "m_test.py").co_filename == str(moved / "m_test.py")


def test_source_encoding_declaration_is_honoured(tmp_path: Path) -> None:
    source = tmp_path / "latin_test.py"
    source.write_bytes(b"# -*- coding: latin-1 -*-\nVALUE = '\xe9'\n")
    namespace: dict[str, Any] = {}
    exec(compile_test_file(source), namespace)  # noqa: S102
    assert namespace["VALUE"] == "\u00e9"


def test_junit_and_github_are_registered_reporters(rt_kernel: Any) -> None:
    assert {"junit", "github"} <= set(rt_kernel.host.reporters())


def test_no_cache_written_when_bytecode_is_off(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    source = tmp_path / "d_test.py"
    source.write_text("assert True\n")
    compile_test_file(source)
    assert not (tmp_path / "__pycache__").exists()


def test_hook_failures_and_run_options_reach_reporters(tmp_path: Path) -> None:
    """Reporters (JUnit, CI annotations) tell a failing hook from a failing test, and know bail/rerun."""
    (tmp_path / "h.test.py").write_text(
        "from rt.test import test, describe, before_all\n"
        "with describe('suite'):\n"
        "    @before_all\n"
        "    def setup():\n"
        "        raise RuntimeError('no database')\n"
        "    test('needs db', lambda: None)\n"
    )
    events = run_in_process(tmp_path, bail=3, rerun_each=2).events
    started = events[0]
    assert isinstance(started, RunStarted) and (started.bail, started.rerun_each) == (3, 2)
    hook_entries = [e for e in events if isinstance(e, TestFinished) and e.hook is not None]
    assert hook_entries and all(e.hook == "before_all" and e.status is TestStatus.FAIL for e in hook_entries)
    assert hook_entries[0].failure is not None and "no database" in hook_entries[0].failure.message
    assert all(e.hook is None for e in events if isinstance(e, TestFinished) and e.path[-1] == "needs db")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_sync_hooks_of_concurrent_async_tests_run_on_the_main_thread(tmp_path: Path, backend: str) -> None:
    """There SIGALRM can time them out (see test_sync_hooks_of_a_concurrent_group_time_out); otherwise they
    behave as in the test's own task: context variables they set reach the test, expect() counts for it,
    and their errors fail it."""
    (tmp_path / "c.test.py").write_text(
        "import contextvars, threading\n"
        "from rt.test import test, describe, before_each, after_each, expect\n"
        "request_id = contextvars.ContextVar('request_id', default=None)\n"
        "threads, seen = [], []\n"
        "@before_each\n"
        "def _():\n"
        "    threads.append(threading.get_ident())\n"
        "    expect(request_id.get()).to_be_none()\n"
        "    request_id.set(len(threads))\n"
        "with describe('group'):\n"
        "    @after_each\n"
        "    def _():\n"
        "        if request_id.get() == 2:\n"
        "            raise RuntimeError('after_each of request 2')\n"
        "    for name in ('first', 'second', 'third'):\n"
        "        @test.concurrent(name)\n"
        "        async def _():\n"
        "            expect(request_id.get()).to_be_defined()\n"
        "            seen.append(request_id.get())\n"
    )
    recorder = Recorder()
    Runner(RunOptions(root=tmp_path), [recorder], backend=backend).run_sync(discover(tmp_path, []))
    finished = [e for e in recorder.events if isinstance(e, TestFinished)]
    assert len(finished) == 3 and all(
        e.expect_calls == 2 for e in finished
    )  # the hook's expect() and the test's
    failed = [
        e for e in finished if e.status is TestStatus.FAIL
    ]  # which test got request 2: the scheduler's call
    assert len(failed) == 1 and failed[0].failure is not None and failed[0].failure.kind == "RuntimeError"
    assert "after_each of request 2" in failed[0].failure.message
    module = sys.modules["rt_test_files.c_test"]
    assert sorted(module.seen) == [1, 2, 3]  # each test saw the value its own before_each set
    assert module.threads == [threading.main_thread().ident] * 3
