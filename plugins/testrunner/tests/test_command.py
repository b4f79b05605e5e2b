"""``rt test`` driven as a subprocess over the fixture projects: output and exit codes as REFERENCE.md."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rt.testing import CliResult, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
Result = CliResult


def run_rt_test(
    project: str | Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> Result:
    """``rt test`` in ``project`` (a folder, or the name of one under fixtures/)."""
    cwd = project if isinstance(project, Path) else FIXTURES / project
    return run_cli("test", *args, cwd=cwd, env=env, timeout=timeout)


RESULT_LINE = re.compile(r"^\((pass|fail|skip|todo)\) (.+?)(?: \[\d+\.\d\dms\])?$", re.MULTILINE)


def results(output: str) -> list[tuple[str, str]]:
    return RESULT_LINE.findall(output)


def names(output: str) -> list[str]:
    return [name for _, name in results(output)]


# --- discovery and filters -------------------------------------------------------------------------------


def test_discovers_the_four_patterns_and_skips_other_files() -> None:
    result = run_rt_test("basic")
    assert result.code == 0, result.output
    assert set(names(result.stderr)) == {
        "adds",
        "outer > inner > nested",
        "upper",
        "test_plain_function_runs",
        "spec file runs",
        "deep spec runs",
    }
    for header in ("math.test.py:", "strings_test.py:", "sub/api.spec.py:", "sub/deeper/parse_spec.py:"):
        assert f"\n{header}\n" in result.stderr
    assert "node_modules" not in result.stderr
    assert "Ran 6 tests across 4 files." in result.stderr


def test_result_lines_and_summary_format() -> None:
    result = run_rt_test("basic")
    assert re.search(r"^\(pass\) outer > inner > nested \[\d+\.\d\dms\]$", result.stderr, re.MULTILINE)
    tail = result.stderr.rstrip().splitlines()[-4:]
    assert tail[0] == " 6 pass"
    assert tail[1] == " 0 fail"
    assert tail[2] == " 5 expect() calls"  # the pytest-style test uses a bare assert
    assert re.fullmatch(r"Ran 6 tests across 4 files\. \[\d+\.\d\dms\]", tail[3])


def test_positional_filters_are_path_fragments() -> None:
    result = run_rt_test("basic", "sub")
    assert sorted(names(result.stderr)) == ["deep spec runs", "spec file runs"]
    result = run_rt_test("basic", "strings", "deeper")
    assert sorted(names(result.stderr)) == ["deep spec runs", "test_plain_function_runs", "upper"]


def test_globs_are_not_expanded() -> None:
    result = run_rt_test("basic", "*.spec.py")
    assert result.code == 5  # no test: under this repository's pytest configuration, pytest's status
    assert "No tests found!" in result.stderr


def test_dot_slash_runs_one_file() -> None:
    result = run_rt_test("basic", "./sub/api.spec.py")
    assert names(result.stderr) == ["spec file runs"]
    assert "Ran 1 test across 1 file." in result.stderr


def test_absolute_path_runs_one_file() -> None:
    result = run_rt_test("basic", str(FIXTURES / "basic" / "math.test.py"))
    assert names(result.stderr) == ["adds", "outer > inner > nested"]


def test_missing_explicit_file_is_a_usage_error() -> None:
    result = run_rt_test("basic", "./nope.test.py")
    assert result.code == 1
    assert "Test file not found" in result.stderr


def test_no_tests_found(tmp_path: Path) -> None:
    # a copy outside this repository: its pyproject.toml's pytest configuration would make the fixture a
    # pytest project, which exits 5 with no tests (exit_status.py)
    shutil.copytree(FIXTURES / "empty", tmp_path / "empty")
    result = run_rt_test(tmp_path / "empty")
    assert result.code == 1
    assert "No tests found!" in result.stderr
    for pattern in ("*.test.py", "*_test.py", "*.spec.py", "*_spec.py"):
        assert pattern in result.stderr
    assert run_rt_test(tmp_path / "empty", "--pass-with-no-tests").code == 0
    assert run_rt_test("empty").code == 5


def test_all_files_run_in_one_process(tmp_path: Path) -> None:
    (tmp_path / "a.test.py").write_text(
        "import os\nfrom rt.test import test\ntest('a', lambda: print('PID', os.getpid()))\n"
    )
    (tmp_path / "b.test.py").write_text(
        "import os\nfrom rt.test import test\ntest('b', lambda: print('PID', os.getpid()))\n"
    )
    result = run_rt_test(tmp_path)
    pids = re.findall(r"PID (\d+)", result.stdout)
    assert len(pids) == 2 and pids[0] == pids[1]


def test_file_that_fails_to_load_is_a_failure(tmp_path: Path) -> None:
    (tmp_path / "broken.test.py").write_text("raise RuntimeError('boom at import')\n")
    result = run_rt_test(tmp_path)
    assert result.code == 1
    assert "RuntimeError: boom at import" in result.stderr
    # REFERENCE.md: a file that fails to load is not a test; the summary counts it as an error
    assert " 0 fail" in result.stderr and " 1 error" in result.stderr


# --- preload and hooks -----------------------------------------------------------------------------------


def test_hooks_order_with_preload() -> None:
    result = run_rt_test("hooks", "--preload", "preload.py")
    assert result.code == 0, result.output
    log = result.stdout.split("FINAL LOG: ", 1)[1].strip().split(" | ")
    assert log == [
        "preload before_all",
        "a before_all",
        "group before_all",
        "preload before_each",
        "a before_each",
        "group before_each",
        "test inside",
        "group after_each",
        "a after_each",
        "preload after_each",
        "group after_all",
        "preload before_each",
        "a before_each",
        "test outside",
        "a after_each",
        "preload after_each",
        "a after_all",
        "preload before_each",
        "test b",
        "preload after_each",
        "preload after_all",
    ]


def test_preload_from_config(tmp_path: Path) -> None:
    (tmp_path / "rt.toml").write_text('[test]\npreload = ["setup.py"]\n')
    (tmp_path / "setup.py").write_text("import builtins\nbuiltins.PRELOADED = True\n")
    (tmp_path / "p.test.py").write_text(
        "from rt.test import test, expect\ntest('sees preload', lambda: expect(PRELOADED).to_be(True))\n"
    )
    result = run_rt_test(tmp_path)
    assert result.code == 0, result.output


def test_missing_preload_is_a_usage_error() -> None:
    result = run_rt_test("hooks", "--preload", "nope.py")
    assert result.code == 1
    assert "preload script not found" in result.stderr


def test_failing_before_all_fails_the_suite(tmp_path: Path) -> None:
    (tmp_path / "h.test.py").write_text(
        "from rt.test import test, before_all\n"
        "@before_all\ndef _():\n    raise RuntimeError('setup broke')\n"
        "test('never runs', lambda: print('RAN'))\n"
    )
    result = run_rt_test(tmp_path)
    assert result.code == 1
    assert "setup broke" in result.stderr
    assert "RAN" not in result.stdout


# --- qualifiers, each, only --------------------------------------------------------------------------------


def test_qualifiers_without_todo_flag() -> None:
    result = run_rt_test("qualifiers", "q.test.py")
    got = {name: status for status, name in results(result.stderr)}
    assert got["failing that fails passes"] == "pass"
    assert got["failing that passes fails"] == "fail"
    assert got["todo without body"] == "todo"
    assert got["todo that passes"] == "todo"
    assert got["failing each 1"] == got["failing each 2"] == "pass"
    assert got["row 1 and x"] == "pass"
    assert got["1 + 2 = 3 [0]"] == got["2 + 3 = 5 [1]"] == "pass"
    assert got["formats s %j %p % %o"] == "pass"
    assert got["describe each 10 > positive"] == got["describe each 20 > positive"] == "pass"
    assert got["skipped group > in skipped group"] == "skip"
    assert "Remove `.failing`" in result.stderr
    assert result.code == 1


def test_todo_flag_runs_todo_tests() -> None:
    result = run_rt_test("qualifiers", "q.test.py", "--todo")
    got = {name: status for status, name in results(result.stderr)}
    assert got["todo that passes"] == "fail"
    assert got["todo that fails"] == "todo"
    assert "Remove `.todo`" in result.stderr


def test_only_in_a_file_restricts_that_file() -> None:
    result = run_rt_test("qualifiers", "only.test.py")
    assert names(result.stderr) == ["only one", "only group > in only group"]


def test_only_flag_skips_files_without_only() -> None:
    result = run_rt_test("qualifiers", "--only")
    assert names(result.stderr) == ["only one", "only group > in only group"]


def test_name_pattern_filters_tests() -> None:
    result = run_rt_test("basic", "-t", "inner")
    assert names(result.stderr) == ["outer > inner > nested"]
    result = run_rt_test("qualifiers", "--test-name-pattern", r"^\d \+ \d = 5")
    assert names(result.stderr) == ["2 + 3 = 5 [1]"]


def test_name_pattern_matching_nothing_fails() -> None:
    result = run_rt_test("basic", "-t", "no-such-test")
    # pytest's "no tests collected": the fixtures sit under this repository's pytest configuration
    # (a project of the spec's patterns alone exits 1: test_reporter_outputs.py)
    assert result.code == 5
    assert run_rt_test("basic", "-t", "no-such-test", "--pass-with-no-tests").code == 0


def test_invalid_name_pattern() -> None:
    result = run_rt_test("basic", "-t", "(")
    assert result.code == 1
    assert "Invalid test name pattern" in result.stderr


# --- failures are readable ---------------------------------------------------------------------------------


def test_failure_details() -> None:
    result = run_rt_test("expect_fail")
    err = result.stderr
    assert result.code == 1
    assert "assert 6 == 7\n +  where 6 = sum([1, 2, 3])" in err
    assert "- Expected\n+ Received" in err
    assert "-           'c']," in err and "+           'b']," in err
    assert "to_have_been_called_with(3)" in err and "1: (1, 2)" in err
    assert "expected 2 assertion(s)" in err
    assert "fixture 'no_such_fixture' not found" in err  # a pytest set-up error: counted as an error
    assert "at diff.test.py:6" in err
    assert " 4 fail" in err and " 1 error" in err


# --- async and time-outs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_async_tests_run_on_the_chosen_backend(backend: str) -> None:
    result = run_rt_test("asyncs", "--backend", backend)
    assert result.code == 0, result.output
    assert f"BACKEND={backend}" in result.stdout
    assert " 2 pass" in result.stderr


def test_backend_from_environment() -> None:
    result = run_rt_test("asyncs", env={"RT_BACKEND": "trio"})
    assert "BACKEND=trio" in result.stdout


@pytest.mark.parametrize(
    ("backend", "concurrent"), [("asyncio", False), ("trio", False), ("asyncio", True), ("trio", True)]
)
def test_timeouts_fail_the_test_and_the_run_continues(backend: str, concurrent: bool) -> None:
    flags = ["--concurrent"] if concurrent else []
    result = run_rt_test("timeouts", "--timeout", "100", "--backend", backend, *flags)
    got = {name: status for status, name in results(result.stderr)}
    assert got == {
        "sync loops forever": "fail",
        "async sleeps forever": "fail",
        "sync sleeps": "fail",
        "own timeout wins": "pass",
        "still runs after time-outs": "pass",
    }
    assert result.stderr.count("^ this test timed out after 100ms.") == 3
    assert result.code == 1


SYNC_HOOKS_THAT_HANG = """\
import time
from rt.test import test, describe, before_each, after_each

with describe("before_each"):
    @before_each
    def _():
        while True:
            pass

    @test.concurrent("a")
    async def _():
        pass

    @test.concurrent("b")
    async def _():
        pass

with describe("after_each"):
    @after_each
    def _():
        time.sleep(3600)

    @test.concurrent("c")
    async def _():
        pass

    @test.concurrent("d")
    async def _():
        pass

test("still runs after the hooks", lambda: None)
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_sync_hooks_of_a_concurrent_group_time_out(tmp_path: Path, backend: str) -> None:
    """Async tests of a concurrent group run in the event loop, where SIGALRM cannot interrupt a sync hook:
    such a hook used to block the loop, and the run, forever."""
    (tmp_path / "hooks.test.py").write_text(SYNC_HOOKS_THAT_HANG)
    result = run_rt_test(tmp_path, "--timeout", "150", "--backend", backend, timeout=30)
    assert dict((name, status) for status, name in results(result.stderr)) == {
        "before_each > a": "fail",
        "before_each > b": "fail",
        "after_each > c": "fail",
        "after_each > d": "fail",
        "still runs after the hooks": "pass",
    }, result.output
    assert result.stderr.count("^ this test timed out after 150ms.") == 4  # the report of every time-out
    assert result.code == 1


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_invalid_timeout(value: str) -> None:
    result = run_rt_test("basic", f"--timeout={value}")
    assert result.code == 1
    assert "Invalid timeout" in result.stderr


# --- retry, rerun, bail --------------------------------------------------------------------------------------


def test_retry_per_test_and_flag() -> None:
    result = run_rt_test("retry", "--retry", "1")
    assert result.code == 0, result.output
    assert "(pass) flaky (attempt 3)" in result.stderr
    assert "(pass) uses the global retry (attempt 2)" in result.stderr
    assert "(skip) skip is never retried" in result.stderr


def test_retry_zero_fails() -> None:
    result = run_rt_test("retry")
    assert result.code == 1
    assert re.search(r"^\(fail\) uses the global retry \[", result.stderr, re.MULTILINE)


def test_retry_from_config() -> None:
    result = run_rt_test("config")
    assert result.code == 0, result.output
    assert "(pass) needs the config retry (attempt 3)" in result.stderr
    assert run_rt_test("config", "--retry", "0").code == 1


def test_retry_from_pyproject_and_environment(tmp_path: Path) -> None:
    (tmp_path / "c.test.py").write_text((FIXTURES / "config" / "c.test.py").read_text())
    assert run_rt_test(tmp_path).code == 1
    assert run_rt_test(tmp_path, env={"RT_TEST_RETRY": "2"}).code == 0
    (tmp_path / "pyproject.toml").write_text("[tool.rt.test]\nretry = 2\n")
    result = run_rt_test(tmp_path)
    assert result.code == 0, result.output
    assert "(attempt 3)" in result.stderr


def test_timeout_from_config(tmp_path: Path) -> None:
    (tmp_path / "rt.toml").write_text("[test]\ntimeout = 50\n")
    (tmp_path / "t.test.py").write_text(
        "import time\nfrom rt.test import test\ntest('slow', lambda: time.sleep(5))\n"
    )
    result = run_rt_test(tmp_path)
    assert "^ this test timed out after 50ms." in result.stderr
    assert result.code == 1


def test_rerun_each_reevaluates_the_file_and_counts_one_file(tmp_path: Path) -> None:
    (tmp_path / "r.test.py").write_text(
        "from rt.test import test\nprint('LOADED')\ntest('x', lambda: None)\n"
    )
    result = run_rt_test(tmp_path, "--rerun-each", "3")
    assert result.stdout.count("LOADED") == 3
    passes = [re.sub(r" \[.*", "", line) for line in result.stderr.splitlines() if line.startswith("(pass)")]
    assert passes == ["(pass) x", "(pass) x (run 2)", "(pass) x (run 3)"]
    assert "Ran 3 tests across 1 file." in result.stderr


@pytest.mark.parametrize(
    ("args", "failures", "message"),
    [
        (["--bail"], 1, "Bailed out after 1 failure\n"),
        (["--bail=3"], 3, "Bailed out after 3 failures\n"),
    ],
)
def test_bail(args: list[str], failures: int, message: str) -> None:
    result = run_rt_test("bail", *args)
    assert result.code == 1
    assert len([s for s, _ in results(result.stderr) if s == "fail"]) == failures
    assert message in result.stderr


def test_without_bail_all_failures_are_reported() -> None:
    result = run_rt_test("bail")
    assert " 5 fail" in result.stderr
    assert "Bailed" not in result.stderr


@pytest.mark.parametrize("value", ["0", "-1", "foo"])
def test_invalid_bail(value: str) -> None:
    result = run_rt_test("bail", f"--bail={value}")
    assert result.code == 1
    assert "Invalid --bail value" in result.stderr


@pytest.mark.parametrize(
    "flag",
    [
        "--retry=-1",
        "--rerun-each=0",
        "--max-concurrency=x",
        "--seed=abc",
        "--shard=3/2",
        "--shard=x",
        "--no-such-flag",
    ],
)
def test_invalid_values_are_usage_errors(flag: str) -> None:
    # rt test's own checks exit 1 as the reference does; an unknown flag waits for the plugins and
    # conftest.py files of a pytest project (the fixture sits under the repository's pytest configuration),
    # and none registering it is pytest's usage error (4), before any test runs
    assert run_rt_test("basic", flag).code == (4 if flag == "--no-such-flag" else 1)


# --- concurrency ----------------------------------------------------------------------------------------------


def test_concurrent_flag_runs_plain_tests_together_and_serial_alone() -> None:
    result = run_rt_test("concurrency", "--concurrent", env={"SLEEPERS_TOGETHER": "6"})
    assert result.code == 0, result.output
    assert "PEAK=6" in result.stdout
    assert "MARKED_PEAK=4" in result.stdout


def test_max_concurrency_limits() -> None:
    together = {"SLEEPERS_TOGETHER": "2", "MARKED_TOGETHER": "2"}
    result = run_rt_test("concurrency", "--concurrent", "--max-concurrency", "2", env=together)
    assert "PEAK=2" in result.stdout
    assert "MARKED_PEAK=2" in result.stdout


def test_without_concurrent_only_marked_tests_overlap() -> None:
    result = run_rt_test("concurrency")
    assert "PEAK=1" in result.stdout
    assert "MARKED_PEAK=4" in result.stdout


# --- randomize and shard -------------------------------------------------------------------------------------


def test_seed_reproduces_order_of_tests_and_files() -> None:
    first = run_rt_test("randomize", "--seed", "7")
    second = run_rt_test("randomize", "--seed", "7")
    other = run_rt_test("randomize", "--seed", "8")
    assert " --seed=7\n" in first.stderr
    assert names(first.stderr) == names(second.stderr)
    assert names(first.stderr) != names(other.stderr)
    assert sorted(names(first.stderr)) == sorted(names(run_rt_test("randomize").stderr))
    orders = {
        tuple(
            re.findall(r"^(\w+\.test\.py):$", run_rt_test("randomize", "--seed", str(s)).stderr, re.MULTILINE)
        )
        for s in range(6)
    }
    assert len(orders) == 2  # both file orders occur across seeds


def test_randomize_prints_a_seed_that_reproduces_the_run() -> None:
    first = run_rt_test("randomize", "--randomize")
    seed = re.search(r"^ --seed=(\d+)$", first.stderr, re.MULTILINE)
    assert seed is not None
    again = run_rt_test("randomize", "--seed", seed.group(1))
    assert names(first.stderr) == names(again.stderr)


def test_default_order_is_declaration_order() -> None:
    result = run_rt_test("randomize", "order")
    assert names(result.stderr) == [f"t{i:02d}" for i in range(12)]
    assert "--seed" not in result.stderr


def test_shards_partition_the_suite() -> None:
    seen: list[str] = []
    for index in (1, 2, 3):
        result = run_rt_test("shard", "--shard", f"{index}/3")
        seen.extend(names(result.stderr))
        assert run_rt_test("shard", "--shard", f"{index}/3").stderr.count("(pass)") == len(
            names(result.stderr)
        )
    assert sorted(seen) == sorted(f"shard file {i}" for i in range(1, 8))


def test_empty_shard_is_no_tests() -> None:
    result = run_rt_test("basic", "sub/api", "--shard", "2/2")
    assert result.code == 5  # no test, under this repository's pytest configuration (exit_status.py)
    assert run_rt_test("basic", "sub/api", "--shard", "2/2", "--pass-with-no-tests").code == 0


# --- reporters ---------------------------------------------------------------------------------------------


def test_dots_reporter() -> None:
    result = run_rt_test("basic", "--dots")
    assert "......\n" in result.stderr
    assert "(pass)" not in result.stderr
    assert " 6 pass" in result.stderr


def test_dots_shows_failures_in_full() -> None:
    result = run_rt_test("bail", "--reporter", "dots")
    assert result.stderr.count("(fail) fails") == 5


def test_unknown_reporter() -> None:
    result = run_rt_test("basic", "--reporter", "nope")
    assert result.code == 1
    assert "unknown reporter 'nope'" in result.stderr


def test_junit_requires_outfile() -> None:
    result = run_rt_test("basic", "--reporter", "junit")
    assert result.code == 1
    assert "--reporter-outfile" in result.stderr


def test_reporter_outfile_without_reporter_is_a_usage_error(tmp_path: Path) -> None:
    """The spec: the outfile is the output file "for the reporter; required with --reporter". The default
    console output is not written to a file, so an outfile alone was ignored without a word."""
    (tmp_path / "ok.test.py").write_text("from rt.test import test\ntest('a', lambda: None)\n")
    result = run_rt_test(tmp_path, "--reporter-outfile", "report.xml")
    assert result.code == 1, result.output
    assert "error: --reporter-outfile 'report.xml' needs --reporter <name>" in result.stderr
    assert "Traceback" not in result.stderr and "Ran " not in result.stderr  # refused before anything runs
    assert not (tmp_path / "report.xml").exists()
    with_reporter = run_rt_test(tmp_path, "--reporter=junit", "--reporter-outfile", "report.xml")
    assert with_reporter.code == 0 and (tmp_path / "report.xml").is_file()


@pytest.mark.parametrize("env", [{"AGENT": "1"}, {"CLAUDECODE": "1"}, {"REPL_ID": "x"}])
def test_agent_mode_hides_passes(env: dict[str, str]) -> None:
    result = run_rt_test("qualifiers", "q.test.py", env=env)
    assert "(pass)" not in result.stderr and "(skip)" not in result.stderr and "(todo)" not in result.stderr
    assert "(fail) failing that passes fails" in result.stderr
    assert " 9 pass" in result.stderr and " 1 fail" in result.stderr


def test_agent_must_be_exactly_one() -> None:
    assert "(pass)" in run_rt_test("basic", env={"AGENT": "true"}).stderr


# --- JUnit and GitHub Actions ------------------------------------------------------------------------------

CI_SUITE = """\
from rt.test import describe, expect, test

attempts = []

test("top passes", lambda: expect(1).to_be(1))

with describe("outer"):
    with describe("inner"):
        test("breaks", lambda: expect("a\\x1b[31mb").to_be("c,d:e"))
    test.skip("skipped", lambda: None)
    test.todo("later")

@test("flaky", retry=2)
def _():
    attempts.append(1)
    expect(len(attempts)).to_be(2)
"""


def _ci_project(tmp_path: Path) -> Path:
    (tmp_path / "sample.test.py").write_text(CI_SUITE)
    (tmp_path / "broken_test.py").write_text("raise RuntimeError('boom at import')\n")
    return tmp_path


def test_junit_report_structure(tmp_path: Path) -> None:
    project = _ci_project(tmp_path)
    result = run_rt_test(project, "--reporter=junit", "--reporter-outfile", "out/report.xml")
    assert result.code == 1, result.output
    assert "(pass) top passes" in result.stderr  # spec C rule 7: the console output is still written
    text = (project / "out" / "report.xml").read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    assert "\x1b" not in text
    root = ET.fromstring(text)
    assert root.tag == "testsuites" and root.get("name") == "rt test"
    # the file that fails to load is an <error> (not a test), as pytest's junitxml reports collection errors
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "6",
        "1",
        "1",
        "2",
    )
    assert int(root.get("assertions") or 0) >= 3 and float(root.get("time") or -1) >= 0
    files = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(files) == {"sample.test.py", "broken_test.py"}
    sample = files["sample.test.py"]
    assert sample.get("hostname") and sample.get("file") == "sample.test.py"
    outer = sample.find("testsuite[@name='outer']")
    assert outer is not None
    inner = outer.find("testsuite[@name='inner']")
    assert inner is not None
    broken = inner.find("testcase[@name='breaks']")
    assert broken is not None
    assert broken.get("classname") == "outer > inner" and broken.get("file") == "sample.test.py"
    assert broken.get("line") == "9" and broken.get("assertions") == "1"
    failure = broken.find("failure")
    assert failure is not None and failure.get("type") and failure.get("message")
    assert outer.find("testcase[@name='skipped']/skipped") is not None
    todo = outer.find("testcase[@name='later']/skipped")
    assert todo is not None and todo.get("message") == "TODO"
    flaky = sample.findall(".//testcase[@name='flaky']")
    assert len(flaky) == 1 and flaky[0].find("failure") is None  # a retried test appears once, last result
    assert files["broken_test.py"].find("testcase/error") is not None


def test_github_annotations(tmp_path: Path) -> None:
    project = _ci_project(tmp_path)
    result = run_rt_test(project, env={"GITHUB_ACTIONS": "true"})
    assert result.code == 1
    output = result.stderr
    assert output.count("::group::") == 2 and output.count("::endgroup::") == 2
    group = output.index("::group::sample.test.py")
    assert group < output.index("(pass) top passes") < output.index("::endgroup::", group)
    errors = [line for line in output.splitlines() if line.startswith("::error ")]
    assert len(errors) == 2
    breaks = next(line for line in errors if "title=outer > inner > breaks" in line)
    assert re.match(r"::error file=sample\.test\.py,line=9,col=\d+,title=outer > inner > breaks::", breaks)
    message = breaks.split("::", 2)[2]
    assert "%0A" in message and "\x1b" not in message and "\n" not in message
    assert any("file=broken_test.py" in line for line in errors)


def test_github_annotations_need_exactly_true_and_are_off_for_agents(tmp_path: Path) -> None:
    project = _ci_project(tmp_path)
    assert "::error" not in run_rt_test(project, env={"GITHUB_ACTIONS": "1"}).stderr
    agent = run_rt_test(project, env={"GITHUB_ACTIONS": "true", "AGENT": "1"}).stderr
    assert "::error" not in agent and "::group::" not in agent


def test_junit_outfile_that_is_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    project = _ci_project(tmp_path)
    (project / "reports").mkdir()
    result = run_rt_test(project, "--reporter=junit", "--reporter-outfile", "reports")
    assert result.code == 1
    assert "is a directory" in result.stderr and "Traceback" not in result.stderr


def test_junit_report_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "ok.test.py").write_text("from rt.test import test\ntest('a', lambda: None)\n")
    result = run_rt_test(tmp_path, "--reporter=junit", "--reporter-outfile", "ok.test.py/report.xml")
    assert result.code == 1
    assert "cannot write the JUnit report" in result.stderr and "Traceback" not in result.stderr
    assert " 1 pass" in result.stderr


def test_github_annotations_with_dots_keep_commands_at_line_starts(tmp_path: Path) -> None:
    result = run_rt_test(_ci_project(tmp_path), "--dots", env={"GITHUB_ACTIONS": "true"})
    assert "::group::" not in result.stderr and "::endgroup::" not in result.stderr
    lines = result.stderr.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 2
    assert all(line.startswith("::error ") for line in lines if "::error" in line)


# --- expect(...).resolves / .rejects without await --------------------------------------------------------

UNAWAITED = """\
from rt.test import test, describe, after_each, expect


async def one():
    return 1


@test("sync test without await")
def _():
    expect(one()).resolves.to_be(1)


@test("async test without await")
async def _():
    expect(one()).resolves.to_be(1)


@test("rejects without await")
async def _():
    expect(one).rejects.to_raise(KeyError)


@test("awaited")
async def _():
    await expect(one()).resolves.to_be(1)
    await expect(one).resolves.not_.to_be(2)


test("sync lambda returning the matcher, which the runner awaits", lambda: expect(one()).resolves.to_be(1))

with describe("concurrent"):
    @test.concurrent("awaits")
    async def _():
        await expect(one()).resolves.to_be(1)

    @test.concurrent("does not await")
    async def _():
        expect(one()).resolves.to_be(1)

with describe("hook"):
    @after_each
    def _():
        expect(one()).resolves.to_be(1)

    test("fails for its after_each", lambda: None)
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_resolves_and_rejects_without_await_fail_the_test(tmp_path: Path, backend: str) -> None:
    """Without ``await`` a matcher under .resolves/.rejects never runs: it used to pass whatever the value,
    with only a "never awaited" RuntimeWarning."""
    (tmp_path / "u.test.py").write_text(UNAWAITED)
    result = run_rt_test(tmp_path, "--backend", backend)
    assert dict((name, status) for status, name in results(result.stderr)) == {
        "sync test without await": "fail",
        "async test without await": "fail",
        "rejects without await": "fail",
        "awaited": "pass",
        "sync lambda returning the matcher, which the runner awaits": "pass",
        "concurrent > awaits": "pass",
        "concurrent > does not await": "fail",
        "hook > fails for its after_each": "fail",
    }, result.output
    assert (
        result.stderr.count("expect(received).resolves.to_be(1) was never awaited, so it checked nothing.")
        == 4
    )
    assert "expect(received).rejects.to_raise(<class 'KeyError'>) was never awaited" in result.stderr
    assert (
        "write `await expect(received).resolves.to_be(1)` (in an `async def` test or hook)" in result.stderr
    )
    assert "    at u.test.py:10 in _\n        expect(one()).resolves.to_be(1)\n" in result.stderr  # where
    assert "RuntimeWarning" not in result.stderr  # the unawaited coroutines were closed: the failure says it
    assert result.code == 1


def test_a_pytest_suite_run_loads_none_of_rts_optional_modules(tmp_path: Path) -> None:
    """Start-up is most of what rt adds to a small suite (docs/benchmarks.md, issue 15), and every loaded
    module also costs a suite whose tests scan sys.modules (freezegun at each freeze_time): what a plain
    pytest-style run does not use stays unimported, and reading every name ``dir(rt)`` lists loads no plugin."""
    (tmp_path / "test_modules.py").write_text(
        "import sys\n"
        "import rt\n"
        "\n"
        "def test_modules():\n"
        "    for name in dir(rt):\n"
        "        getattr(rt, name)\n"
        "    print('LOADED', ' '.join(sorted(sys.modules)))\n"
    )
    result = run_rt_test(tmp_path, "-s")
    assert result.code == 0, result.output
    loaded = set(re.search(r"^LOADED (.*)$", result.stdout, re.MULTILINE).group(1).split())  # type: ignore[union-attr]
    assert "rt_testrunner.runner" in loaded  # the listing is real
    unused = {
        "rt_testrunner.expect",
        "rt_testrunner.mocking",
        "rt_testrunner.coverage_run",
        "rt_testrunner.failures",  # a failure's rendering
        "rt_testrunner.explain",  # a failed assert's explanation
        "configparser",
        "tempfile",
        "importlib.abc",
        "unittest",
        "websockets",  # rt.WebSocket's, through rt-http
        "httpx",  # rt.fetch's
        "h11",  # rt.serve's
    }
    assert not loaded & unused
