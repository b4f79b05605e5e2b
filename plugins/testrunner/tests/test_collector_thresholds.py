"""``rt test`` makes the garbage collector's young collections rarer from its start to its first test (issue 15,
session 15: 11 M instructions of a one-test run, docs/benchmarks.md "Speed (session 15)"); the tests never see
it: each runs with the thresholds it has under pytest 9.2, on the same small project."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files
from rt_testrunner import exiting

#: a test module that writes, for each of its tests, the collector's state the test sees
_RECORDING_TESTS = """
import gc
import json
import os


def _record(name):
    with open(os.environ["GC_OUT"], "a") as out:
        out.write(json.dumps([name, list(gc.get_threshold()), gc.isenabled()]) + "\\n")


def test_first():
    _record("first")


def test_second():
    _record("second")
"""


def _seen(out: Path) -> list[object]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def _both_runners(project: Path, tmp_path: Path, *args: str) -> tuple[list[object], list[object]]:
    """What the tests recorded under pytest and under ``rt test`` (each run's outcome checked first)."""
    pytest_run = run_pytest(*args, cwd=project, env={"GC_OUT": str(tmp_path / "pytest.jsonl")})
    rt_run = run_cli("test", *args, cwd=project, env={"GC_OUT": str(tmp_path / "rt.jsonl")})
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 2}, pytest_run.output
    assert summary_counts(rt_run.stderr) == {"pass": 2}, rt_run.output
    return _seen(tmp_path / "pytest.jsonl"), _seen(tmp_path / "rt.jsonl")


def test_the_tests_see_the_thresholds_they_have_under_pytest(tmp_path: Path) -> None:
    """A pytest suite: its tests run with Python's thresholds (700, 10, 10), as under pytest, though rt's
    start-up and the suite's collection ran with rarer young collections. pytest 9.2: 2 passed."""
    project = write_files(tmp_path / "project", {"test_gc.py": "import pytest\n" + _RECORDING_TESTS})
    under_pytest, under_rt = _both_runners(project, tmp_path)
    assert under_pytest == [["first", [700, 10, 10], True], ["second", [700, 10, 10], True]]
    assert under_rt == under_pytest


def test_parallel_workers_run_their_tests_with_python_s_thresholds(tmp_path: Path) -> None:
    """Under ``--parallel=2`` each worker's tests see Python's thresholds too (the workers come from a zygote
    started before the main process relaxed its collector, or fresh). pytest 9.2: 2 passed."""
    project = write_files(
        tmp_path / "project",
        {
            "test_gc_a.py": "import pytest\n" + _RECORDING_TESTS,
            "test_gc_b.py": "import pytest\n" + _RECORDING_TESTS,
        },
    )
    result = run_cli("test", "--parallel=2", cwd=project, env={"GC_OUT": str(tmp_path / "rt.jsonl")})
    assert summary_counts(result.stderr) == {"pass": 4}, result.output
    assert sorted(map(str, _seen(tmp_path / "rt.jsonl"))) == sorted(
        map(str, 2 * [["first", [700, 10, 10], True], ["second", [700, 10, 10], True]])
    )


def test_thresholds_a_conftest_sets_while_collected_are_kept(tmp_path: Path) -> None:
    """A conftest.py that sets its own thresholds when it is imported (during collection): the tests run with
    them under both runners; rt's restoring leaves what the suite chose. pytest 9.2: 2 passed."""
    project = write_files(
        tmp_path / "project",
        {
            "conftest.py": "import gc\n\ngc.set_threshold(1234, 5, 6)\n",
            "test_gc.py": "import pytest\n" + _RECORDING_TESTS,
        },
    )
    under_pytest, under_rt = _both_runners(project, tmp_path)
    assert under_pytest == [["first", [1234, 5, 6], True], ["second", [1234, 5, 6], True]]
    assert under_rt == under_pytest


def test_a_file_of_rt_s_own_patterns_runs_with_python_s_thresholds(tmp_path: Path) -> None:
    """A project that never imports pytest (rt's own ``*.test.py`` file, imported when its turn comes): its
    tests see Python's thresholds too."""
    project = write_files(tmp_path / "project", {"gc.test.py": _RECORDING_TESTS})
    result = run_cli("test", cwd=project, env={"GC_OUT": str(tmp_path / "rt.jsonl")})
    assert summary_counts(result.stderr) == {"pass": 2}, result.output
    assert _seen(tmp_path / "rt.jsonl") == [["first", [700, 10, 10], True], ["second", [700, 10, 10], True]]


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    """This process's thresholds, put back after the test whatever it did to them."""
    before = gc.get_threshold()
    try:
        yield before
    finally:
        exiting.restore_collector()
        gc.set_threshold(*before)


def test_relax_then_restore(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(700, 10, 10)
    exiting.relax_collector()
    assert gc.get_threshold() == (exiting.START_UP_THRESHOLD, 10, 10)
    exiting.relax_collector()  # once: a second call does not take the relaxed values for the originals
    exiting.restore_collector()
    assert gc.get_threshold() == (700, 10, 10)
    exiting.restore_collector()  # nothing left to restore
    assert gc.get_threshold() == (700, 10, 10)


def test_restore_leaves_thresholds_set_meanwhile(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(700, 10, 10)
    exiting.relax_collector()
    gc.set_threshold(2000, 3, 4)  # the suite's code, while it is collected
    exiting.restore_collector()
    assert gc.get_threshold() == (2000, 3, 4)


def test_collector_off_or_already_rarer_is_left_alone(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(0, 10, 10)  # threshold 0: no automatic collection at all
    exiting.relax_collector()
    assert gc.get_threshold() == (0, 10, 10)
    gc.set_threshold(100_000, 10, 10)
    exiting.relax_collector()
    assert gc.get_threshold() == (100_000, 10, 10)
