"""``rt test --parallel``: worker processes give the same results as one process (issue 15).

Each test writes a small project and runs ``rt test`` on it twice, in one process and with ``--parallel=2``,
and compares what a user and a CI system see: the counts, the exit code, each file's console block, the JUnit
file and the snapshots written. Nothing here depends on timing: which worker runs which file is left open,
and only what cannot vary with it is asserted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rt.testing import clean_environ, cli_environ, counts_from_pytest, run_pytest, summary_counts, write_files

SUMMARY = re.compile(r"^ (\d+) (pass|fail|skip|todo|errors?|xfail|xpass|filtered out)$", re.MULTILINE)
TIMING = re.compile(r" \[\d+(\.\d+)?m?s\]")


def environ(**extra: str) -> dict[str, str]:
    return cli_environ(extra)


def rt_test(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rt", "test", *args],
        cwd=cwd,
        env=env or environ(),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )


write = write_files


def counts(stderr: str) -> dict[str, int]:
    return {("error" if kind == "errors" else kind): int(number) for number, kind in SUMMARY.findall(stderr)}


def file_blocks(stderr: str) -> dict[str, str]:
    """The console's per-file blocks (a ``name:`` line after a blank one, up to the next such line or the
    summary), timings removed, by file name."""
    # the summary: its seed line or its ``Interrupted: N errors during collection`` line first, then the counts
    text = re.split(r"\n\n(?: --seed=\d+\n)?(?:Interrupted: [^\n]*\n)? \d+ pass\n", stderr)[0]
    # the newline ending a header is left to be the next header's blank line when the file's block is empty;
    # an empty block can also be the last one, its header then ending the text (workers finish in any order)
    headers = list(re.finditer(r"(?:^|\n)\n([\w./-]+\.py):(?=\n|$)", text))
    blocks: dict[str, str] = {}
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        blocks[header.group(1)] = TIMING.sub("", text[header.end() + 1 : end])
    return blocks


def junit_cases(path: Path) -> dict[str, list[tuple[str, ...]]]:
    """Each testsuite's cases with their outcome, messages and output (no times, no host), by file."""
    suites: dict[str, list[tuple[str, ...]]] = {}
    for suite in ET.parse(path).getroot().iter("testsuite"):
        if suite.get("file") is None or suite.get("name") != suite.get("file"):
            continue
        cases = []
        for case in suite.iter("testcase"):
            outcome = tuple(
                f"{child.tag}|{child.get('type', '')}|{child.get('message', '')}|{(child.text or '').strip()}"
                for child in case
            )
            cases.append((case.get("name", ""), case.get("classname", ""), case.get("line", ""), *outcome))
        suites[suite.get("name", "")] = cases
    return suites


# a suite with every kind of outcome, output, snapshots and a collection error, in five files
MIXED = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        markers = ["slow: slow tests"]
        addopts = "--continue-on-collection-errors"
    """,
    "conftest.py": """
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture set-up failed")
    """,
    "test_outcomes.py": """
        import sys
        import pytest

        def test_pass():
            print("to stdout")
            print("to stderr", file=sys.stderr)

        def test_fail():
            assert [1, 2, 3] == [1, 2, 4]

        @pytest.mark.skip(reason="not today")
        def test_skip():
            pass

        @pytest.mark.xfail(reason="known bug")
        def test_xfail():
            assert False

        @pytest.mark.xfail(reason="fixed since")
        def test_xpass():
            pass

        def test_error(broken):
            pass

        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_param(n):
            assert n != 2

        @pytest.mark.slow
        def test_slow():
            pass
    """,
    "test_classes.py": """
        import unittest

        class TestThing:
            def test_method(self):
                assert "abc".upper() == "ABC"

        class Case(unittest.TestCase):
            def test_sub(self):
                for i in range(3):
                    with self.subTest(i=i):
                        self.assertLess(i, 5)

            @unittest.skip("unittest skip")
            def test_skipped(self):
                pass
    """,
    "test_broken_import.py": """
        import a_module_that_does_not_exist
    """,
    "snaps.test.py": """
        from rt.test import describe, expect, test

        test("object", lambda: expect({"b": 1, "a": [1, 2]}).to_match_snapshot())

        with describe("group"):
            test("text", lambda: expect("multi\\nline").to_match_snapshot())
            test("echoes", lambda: print("printed by an rt test"))
    """,
    "retry.test.py": """
        from rt.test import expect, test

        runs = []

        @test("flaky", retry=2)
        def _():
            runs.append(1)
            expect(len(runs)).to_be(2)
    """,
}


def two_copies(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    one = write(tmp_path / "one", files)
    many = tmp_path / "many"
    shutil.copytree(one, many)
    return one, many


#: how the workers start: forked by the zygote (the default where fork is safe) or as fresh interpreters
STARTS = {"forked": {}, "fresh": {"RT_TEST_FORK": "0"}}


@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("-k", "not param", "-m", "not slow"),
        ("-t", "pass|param|object|text|flaky|method", "--shard=2/2", "--rerun-each=2", "--seed=7"),
    ],
    ids=["all", "filtered", "name-shard-rerun-seed"],
)
def test_same_results_as_one_process(tmp_path: Path, extra: tuple[str, ...], start: str) -> None:
    one, many = two_copies(tmp_path, MIXED)
    junit = ("--reporter=junit", "--reporter-outfile=report.xml")
    single = rt_test(one, *junit, *extra)
    parallel = rt_test(many, "--parallel=2", *junit, *extra, env=environ(**STARTS[start]))
    assert single.returncode == parallel.returncode, parallel.stderr
    assert counts(parallel.stderr) == counts(single.stderr)
    assert file_blocks(parallel.stderr) == file_blocks(single.stderr)
    assert junit_cases(many / "report.xml") == junit_cases(one / "report.xml")
    # every summary line but the run's duration
    tail = [line for line in single.stderr.split("\n\n ")[-1].splitlines() if not line.startswith("Ran ")]
    assert tail and all(line in parallel.stderr for line in tail)
    # snapshots: written by the worker that ran the file, the same as in one process
    snap = "__snapshots__/snaps.test.py.snap"
    assert (many / snap).read_text() == (one / snap).read_text()
    if extra:
        assert len(file_blocks(single.stderr)) >= 2 and counts(single.stderr)["pass"] >= 4
        return
    assert single.returncode == 1
    assert {"pass", "fail", "skip", "xfail", "xpass", "error"} <= set(counts(single.stderr)), single.stderr
    assert len(file_blocks(single.stderr)) == 5
    assert "printed by an rt test" in parallel.stdout
    assert "snapshots: +2 added" in parallel.stderr
    again = rt_test(many, "--parallel=2", "snaps.test.py")
    assert again.returncode == 0, again.stderr
    assert counts(again.stderr) == {"pass": 3, "fail": 0}
    assert "2 snapshots, 2 expect() calls" in again.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [((), {"AGENT": "1"}), ((), {"GITHUB_ACTIONS": "true"}), (("--dots",), {})],
    ids=["agent", "github", "dots"],
)
def test_other_reporters_see_the_same_run(tmp_path: Path, args: tuple[str, ...], env: dict[str, str]) -> None:
    one, many = two_copies(tmp_path, MIXED)
    single = rt_test(one, *args, env=environ(**env))
    parallel = rt_test(many, "--parallel=2", *args, env=environ(**env))
    assert single.returncode == parallel.returncode == 1

    def lines(text: str) -> list[str]:
        # and not the line saying no worker is forked (an installed plugin's thread: pytest-rerunfailures')
        kept = [
            TIMING.sub("", line)
            for line in text.splitlines()
            if not line.startswith(("Ran ", "rt test --parallel: threads run"))
        ]
        return sorted(line for line in kept if line.strip(".")) if "--dots" in args else sorted(kept)

    # the same lines (files finish in another order, so sorted), and as many dots
    assert lines(parallel.stderr) == lines(single.stderr)
    assert parallel.stderr.count(".") == single.stderr.count(".")
    if env.get("GITHUB_ACTIONS"):
        assert sum(line.startswith("::error") for line in parallel.stderr.splitlines()) >= 3


# a pytest suite with every kind of outcome pytest counts: reruns (pytest-rerunfailures), xfail and xpass, a
# module that skips itself, a fixture's error, subtests (the fixture's and unittest's), doctests, and a file big
# enough to be cut into pieces (plan.py) whose flaky tests are rerun in whichever worker runs them
PYTEST_OUTCOMES = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        addopts = "--doctest-modules"
    """,
    "conftest.py": """
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture set-up failed")
    """,
    "helpers.py": '''
        def double(n):
            """
            >>> double(2)
            4
            >>> double(3)
            7
            """
            return 2 * n

        def half(n):
            """
            >>> half(4)
            2.0
            """
            return n / 2
    ''',
    "test_outcomes.py": """
        import pytest

        attempts = []

        @pytest.mark.flaky(reruns=2)
        def test_flaky():
            attempts.append(1)
            assert len(attempts) == 3

        @pytest.mark.xfail(reason="known bug")
        def test_xfail():
            assert False

        @pytest.mark.xfail(reason="fixed since")
        def test_xpass():
            pass

        def test_error(broken):
            pass

        def test_subtests(subtests):
            for i in range(3):
                with subtests.test(i=i):
                    assert i != 1
    """,
    "test_many.py": """
        import pytest

        failed_once = set()

        @pytest.mark.flaky(reruns=1)
        @pytest.mark.parametrize("n", range(40))
        def test_n(n):
            if n % 10 == 3 and n not in failed_once:
                failed_once.add(n)
                assert False, "first attempt fails"
            assert n != 17
    """,
    "test_module_skip.py": """
        import pytest

        pytest.skip("not on this system", allow_module_level=True)

        def test_never():
            pass
    """,
    "test_unit.py": """
        import unittest

        class Case(unittest.TestCase):
            def test_sub(self):
                for i in range(3):
                    with self.subTest(i=i):
                        self.assertLess(i, 2)

            @unittest.expectedFailure
            def test_expected(self):
                self.assertEqual(1, 2)
    """,
}
BROKEN_IMPORT = {"test_broken.py": "import a_module_that_does_not_exist\n"}
#: async tests under anyio's pytest plugin, each on asyncio and on trio, with an async fixture; a file big enough
#: to be cut into pieces
ASYNC_TESTS = {
    "test_async.py": """
        import anyio
        import pytest

        pytestmark = pytest.mark.anyio

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request):
            return request.param

        @pytest.fixture
        async def resource():
            await anyio.sleep(0)
            yield 3

        async def test_ok(resource):
            assert resource == 3

        async def test_fail():
            assert 1 == 2

        @pytest.mark.parametrize("n", range(12))
        async def test_many(n):
            await anyio.sleep(0)
            assert n != 5
    """,
}
PYTEST_PROJECTS = {
    "outcomes": (PYTEST_OUTCOMES, ()),
    "collection-error": ({**PYTEST_OUTCOMES, **BROKEN_IMPORT}, ()),
    "collection-error-continue": (
        {**PYTEST_OUTCOMES, **BROKEN_IMPORT},
        ("--continue-on-collection-errors",),
    ),
    "async": (ASYNC_TESTS, ()),
}


def summary_lines(stderr: str) -> list[str]:
    """The run's summary (from the ``Interrupted`` line or the first count), without its duration line."""
    lines = stderr.rstrip("\n").split("\n\n")[-1].splitlines()
    return [line for line in lines if not line.startswith("Ran ")]


@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize("project", list(PYTEST_PROJECTS))
def test_pytest_outcomes_summary_and_exit_status_as_in_one_process(
    tmp_path: Path, project: str, start: str
) -> None:
    """Every count, summary line (pytest-rerunfailures' `` N rerun``, ``Interrupted: N errors during
    collection``), file block and the exit status are the one-process run's, which are pytest's."""
    files, extra = PYTEST_PROJECTS[project]
    one, many = two_copies(tmp_path, files)
    single = rt_test(one, *extra)
    parallel = rt_test(many, "--parallel=2", *extra, env=environ(**STARTS[start]))
    assert parallel.returncode == single.returncode, parallel.stderr
    assert summary_lines(parallel.stderr) == summary_lines(single.stderr), parallel.stderr
    assert file_blocks(parallel.stderr) == file_blocks(single.stderr)
    # what the one-process run is checked against: pytest's own counts and summary
    reference = run_pytest(*extra, cwd=one)
    assert summary_counts(single.stderr) == counts_from_pytest(reference.stdout), reference.stdout
    if project == "outcomes":
        assert summary_counts(single.stderr) == {
            "pass": 42,
            "fail": 5,
            "skip": 2,
            "error": 1,
            "xfail": 2,
            "xpass": 1,
            "rerun": 7,
        }
        assert len(file_blocks(parallel.stderr)) == 6  # conftest.py too, collected for its doctests
    elif project == "collection-error":
        assert "Interrupted: 2 errors during collection" in summary_lines(single.stderr)
        assert "Interrupted: 2 errors during collection" in reference.stdout
        assert set(file_blocks(parallel.stderr)) == {"test_broken.py", "test_module_skip.py"}
    elif project == "async":
        assert summary_counts(single.stderr) == {"pass": 24, "fail": 4}
    else:
        assert "Interrupted" not in parallel.stderr
        assert summary_counts(parallel.stderr)["error"] == 3


CRASHING = {
    "test_ok.py": """
        def test_one():
            pass

        def test_two():
            pass
    """,
    "test_exits.py": """
        import os

        def test_before():
            pass

        def test_exits():
            os._exit(3)

        def test_never_reached():
            pass
    """,
    "test_segfault.py": """
        import faulthandler

        def test_segfault():
            faulthandler.disable()
            faulthandler._sigsegv()
    """,
    "test_later.py": """
        def test_after_the_crashes():
            pass
    """,
}


@pytest.mark.parametrize("start", list(STARTS))
def test_a_crashing_worker_makes_its_file_an_error_and_the_run_goes_on(tmp_path: Path, start: str) -> None:
    project = write(tmp_path, CRASHING)
    result = rt_test(
        project, "--parallel=2", "--reporter=junit", "--reporter-outfile=r.xml", env=environ(**STARTS[start])
    )
    assert result.returncode == 1
    # the other files ran in full (new workers took over), the crashed files are errors
    assert counts(result.stderr) == {"pass": 4, "fail": 0, "error": 2}, result.stderr
    blocks = file_blocks(result.stderr)
    assert 'the worker process crashed (exit code 3) while running "test_exits"' in blocks["test_exits.py"]
    assert "(pass) test_before" in blocks["test_exits.py"]
    assert "test_never_reached" not in result.stderr
    assert "(fail) test_exits.py (worker crashed)" in blocks["test_exits.py"]
    assert "crashed (killed by signal SIGSEGV)" in blocks["test_segfault.py"]
    assert "(pass) test_after_the_crashes" in blocks["test_later.py"]
    suites = {s.get("name"): s for s in ET.parse(project / "r.xml").getroot().iter("testsuite")}
    assert "crashed (exit code 3)" in ET.tostring(suites["test_exits.py"], encoding="unicode")


def test_a_worker_dying_while_importing_names_the_file_and_ends_the_run(tmp_path: Path) -> None:
    project = write(
        tmp_path,
        {
            "test_fine.py": "def test_fine():\n    pass\n",
            "test_imports_badly.py": "import os\nos._exit(0)\n",
            "test_zlast.py": "def test_last():\n    pass\n",
        },
    )
    result = rt_test(project, "--parallel=2")
    assert result.returncode == 1
    blocks = file_blocks(result.stderr)
    message = "the worker process crashed (exit code 0) while importing this file"
    assert message in blocks["test_imports_badly.py"], result.stderr
    assert counts(result.stderr)["error"] == 1
    assert "(pass)" not in result.stderr  # no worker got past importing the files


def test_bail_stops_every_worker(tmp_path: Path) -> None:
    files = {f"test_f{i}.py": f"def test_fails_{i}():\n    assert False\n" for i in range(6)}
    project = write(tmp_path, files)
    result = rt_test(project, "--parallel=2", "--bail")
    assert result.returncode == 1
    assert "Bailed out after 1 failure" in result.stderr
    assert counts(result.stderr) == {"pass": 0, "fail": 1}, result.stderr
    two = rt_test(project, "--parallel=2", "--bail=2")
    assert counts(two.stderr) == {"pass": 0, "fail": 2}, two.stderr


SESSION_FIXTURES = {
    "conftest.py": """
        import os
        from pathlib import Path

        import pytest

        LOG = Path(os.environ["FIXTURE_LOG"])

        @pytest.fixture(scope="session")
        def resource():
            with LOG.open("a") as log:
                log.write(f"setup {os.getpid()}\\n")
            yield {"pid": os.getpid(), "id": object()}
            with LOG.open("a") as log:
                log.write(f"teardown {os.getpid()}\\n")

        @pytest.fixture(scope="module")
        def per_module(resource):
            return resource
    """,
    **{
        f"test_m{i}.py": """
            import os
            from pathlib import Path

            def test_uses_it(resource, per_module):
                assert resource["pid"] == os.getpid()
                assert os.environ["RT_TEST_WORKER"] in ("1", "2")
                assert per_module is resource
                with Path(os.environ["FIXTURE_LOG"]).open("a") as log:
                    log.write(f"test {os.getpid()} {id(resource)}\\n")
        """
        for i in range(4)
    },
}


def test_session_fixtures_are_set_up_once_per_worker(tmp_path: Path) -> None:
    project = write(tmp_path / "p", SESSION_FIXTURES)
    log = tmp_path / "log.txt"
    result = rt_test(project, "--parallel=2", env=environ(FIXTURE_LOG=str(log)))
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 4, "fail": 0}
    lines = log.read_text().splitlines()
    setups = [line.split()[1] for line in lines if line.startswith("setup")]
    teardowns = [line.split()[1] for line in lines if line.startswith("teardown")]
    tests = [line.split()[1:] for line in lines if line.startswith("test")]
    assert len(tests) == 4
    workers = {pid for pid, _ in tests}
    # one set-up and one teardown in each worker that ran tests, one value per worker
    assert sorted(setups) == sorted(teardowns) == sorted(workers)
    assert 1 <= len(workers) <= 2
    assert len({(pid, value) for pid, value in tests}) == len(workers)
    assert str(os.getpid()) not in workers


PARENTS = {
    f"test_p{i}.py": """
        import os
        from pathlib import Path

        def test_records_its_parent():
            with Path(os.environ["PARENT_LOG"]).open("a") as log:
                log.write(f"{os.environ['RT_TEST_WORKER']} {os.getpid()} {os.getppid()}\\n")
    """
    for i in range(4)
}


@pytest.mark.parametrize("start", list(STARTS))
def test_workers_are_forked_from_one_zygote_or_started_fresh(tmp_path: Path, start: str) -> None:
    """By default every worker is a fork of the one zygote process (not of the main process); with
    RT_TEST_FORK=0 each is a fresh interpreter started by the main process. Both give the same run."""
    project = write(tmp_path / "p", PARENTS)
    log = tmp_path / "parents.txt"
    process = subprocess.Popen(
        [sys.executable, "-m", "rt", "test", "--parallel=2"],
        cwd=project,
        env=environ(PARENT_LOG=str(log), **STARTS[start]),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert counts(stderr) == {"pass": 4, "fail": 0}
    rows = [line.split() for line in log.read_text().splitlines()]
    assert len(rows) == 4
    parents = {parent for _, _, parent in rows}
    workers = {(number, pid) for number, pid, _ in rows}
    assert len({number for number, _ in workers}) == len({pid for _, pid in workers})  # one number each
    assert str(process.pid) not in {pid for _, pid in workers}
    if start == "forked":
        assert len(parents) == 1 and str(process.pid) not in parents
    else:
        assert parents == {str(process.pid)}


ZYGOTE_KIND = {
    f"test_z{i}.py": """
        import os
        from pathlib import Path

        def test_records_how_its_zygote_started():
            cmdline = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
            kind = "fresh" if b"rt_testrunner.zygote" in cmdline else "forked"
            with Path(os.environ["ZYGOTE_LOG"]).open("a") as log:
                log.write(f"{kind} {os.getpid()}\\n")
    """
    for i in range(4)
}
#: another program that calls rt's command line as a function, and goes on when it returns
HARNESS = """
    import os
    from pathlib import Path

    from rt.cli import main

    def run():
        code = main(["test", "--parallel=2"])
        with Path(os.environ["ZYGOTE_LOG"]).open("a") as log:
            log.write(f"returned {os.getpid()}\\n")
        return code
"""


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("caller", ["rt", "another-program"])
def test_the_zygote_is_a_fork_of_rt_itself_but_not_of_another_program(tmp_path: Path, caller: str) -> None:
    """``rt test --parallel`` forks its zygote from itself, first thing (rt, its kernel and the command are
    imported already). When another program's code called rt's command line, the zygote is a fresh
    interpreter instead: a worker forked from rt ends by unwinding its stack, which must hold rt's frames
    only, so no worker ever returns into that program's code."""
    project = write(tmp_path / "p", ZYGOTE_KIND)
    harness = write(tmp_path / "harness", {"harness.py": HARNESS})
    log = tmp_path / "zygote.txt"
    if caller == "rt":
        command = [sys.executable, "-m", "rt", "test", "--parallel=2"]
    else:
        code = f"import sys; sys.path.insert(0, {str(harness)!r}); import harness; sys.exit(harness.run())"
        command = [sys.executable, "-c", code]
    result = subprocess.run(
        command,
        cwd=project,
        env=environ(ZYGOTE_LOG=str(log)),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 4, "fail": 0}
    rows = [line.split() for line in log.read_text().splitlines()]
    assert {kind for kind, _ in rows if kind != "returned"} == {"forked" if caller == "rt" else "fresh"}
    returned = [pid for kind, pid in rows if kind == "returned"]
    workers = [pid for kind, pid in rows if kind != "returned"]
    if caller == "rt":
        assert returned == []
    else:
        assert len(returned) == 1 and returned[0] not in workers  # in the calling process only, once


IMPORTS = {
    **{
        f"test_m{i}.py": f"""
        import os
        from pathlib import Path

        IMPORTED_IN = os.getpid()
        with Path(os.environ["IMPORT_LOG"]).open("a") as log:
            log.write("test_m{i} " + str(IMPORTED_IN) + "\\n")
        BUFFERED = open(os.environ["IMPORT_LOG"] + ".buffered", "a")
        BUFFERED.write("written once by test_m{i}\\n")  # left in the buffer: written at exit

        def test_sees_the_whole_session_imported():
            names = {{line.split()[0] for line in Path(os.environ["IMPORT_LOG"]).read_text().splitlines()}}
            assert names == {{"test_m0", "test_m1", "test_m2", "test_m3"}}
            with Path(os.environ["IMPORT_LOG"] + ".tests").open("a") as log:
                log.write(f"{{IMPORTED_IN}} {{os.getpid()}}\\n")
        """
        for i in range(4)
    }
}
#: a test module that starts a thread while imported: forking after that is unsafe
STARTS_A_THREAD = """
    import threading

    STOP = threading.Event()
    threading.Thread(target=STOP.wait, daemon=True).start()

    def test_fine():
        pass
"""


@pytest.mark.parametrize("threads", [False, True], ids=["collected-once", "thread-at-import"])
def test_the_zygote_collects_once_and_the_workers_inherit_the_imported_modules(
    tmp_path: Path, threads: bool
) -> None:
    """Forked workers start from a run the zygote collected: every test module is imported once, before any
    test runs (whole-session collection), in the zygote; its buffers are written once. When a module starts a
    thread while imported, no worker is forked: the zygote runs tests itself, and the other workers are fresh
    interpreters that import the files themselves."""
    files = {**IMPORTS, **({"test_thread.py": STARTS_A_THREAD} if threads else {})}
    project = write(tmp_path / "p", files)
    log = tmp_path / "imports.txt"
    result = rt_test(project, "--parallel=2", "--parallel-delay=0", env=environ(IMPORT_LOG=str(log)))
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 4 + threads, "fail": 0}
    imports = [line.split() for line in log.read_text().splitlines()]
    tests = [line.split() for line in Path(f"{log}.tests").read_text().splitlines()]
    assert len(tests) == 4
    if threads:
        # no fork after the thread started: the zygote ran tests itself with the modules it imported (its
        # thread alive), and every other worker was a fresh interpreter that imported every file itself
        assert all(imported == ran for imported, ran in tests)
        importers = [pid for _, pid in imports]
        assert len(imports) == 4 * len(set(importers))  # each process imported each file once
        zygote = importers[0]  # it collected before any other worker started
        assert zygote in {ran for _, ran in tests}
    else:
        assert sorted(name for name, _ in imports) == ["test_m0", "test_m1", "test_m2", "test_m3"]
        zygote = {pid for _, pid in imports}
        assert len(zygote) == 1
        assert {imported for imported, _ in tests} == zygote
        assert zygote.isdisjoint(ran for _, ran in tests)
        buffered = Path(f"{log}.buffered").read_text().splitlines()
        assert sorted(buffered) == [f"written once by test_m{i}" for i in range(4)]


def test_a_thread_a_plugin_starts_when_configured_is_named_in_one_line(tmp_path: Path) -> None:
    """A conftest.py's (or an installed plugin's) ``pytest_configure`` that starts a thread (pytest-rerunfailures
    starts its server there when pytest-xdist is installed) runs in the zygote, which then cannot fork the
    workers safely: it runs tests itself and the other workers start fresh, each collecting the suite again.
    rt did so without a word (the run as slow as one process's, nothing said why). Now one line names the
    thread and the module of what it runs; the results are pytest's (2 passed)."""
    files = {
        "conftest.py": """
            import threading
            import time


            def keep():
                time.sleep(600)


            def pytest_configure(config):
                threading.Thread(target=keep, name="keeper", daemon=True).start()
        """,
        "test_a.py": "def test_a():\n    pass\n",
        "test_b.py": "def test_b():\n    pass\n",
    }
    project = write(tmp_path / "p", files)
    by_pytest = run_pytest("-p", "no:randomly", cwd=project)
    assert counts_from_pytest(by_pytest.stdout) == {"pass": 2}
    result = rt_test(project, "--parallel=2", "-p", "no:randomly")
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 2, "fail": 0}
    told = [line for line in result.stderr.splitlines() if line.startswith("rt test --parallel: threads run")]
    assert len(told) == 1, result.stderr
    assert "'keeper' of conftest" in told[0]


def test_the_worker_that_ends_the_session_has_every_deselected_test(tmp_path: Path) -> None:
    """``terminalreporter.stats["deselected"]`` and ``session.testscollected`` in the worker that ends the
    session (where ``pytest_terminal_summary`` runs once, with the whole run's reports): the tests ``-k`` left
    out of every file, as pytest's one session has them. rt's held those of the files that worker ran only
    (pytest-json-report's summary counts them). pytest 9.2: 8 passed, 8 deselected, 8 collected."""
    files = {
        "conftest.py": """
            import os
            import time

            import pytest

            HERE = os.path.dirname(__file__)
            SESSION = []


            def pytest_sessionstart(session):
                SESSION.append(session)


            @pytest.fixture(autouse=True)
            def slow(request):
                worker = os.environ.get("RT_TEST_WORKER")
                if worker:
                    with open(os.path.join(HERE, "ran.txt"), "a") as out:
                        out.write(worker + "\\n")
                if worker == "1":
                    time.sleep(0.6)  # the first worker is slow: the second one takes files too


            def pytest_terminal_summary(terminalreporter):
                left_out = sorted(item.nodeid for item in terminalreporter.stats.get("deselected", []))
                with open(os.path.join(HERE, "summary.txt"), "w") as out:
                    out.write("\\n".join([str(SESSION[0].testscollected), *left_out]))
        """,
        **{
            f"test_{n}.py": "def test_kept():\n    pass\n\n\ndef test_dropped():\n    pass\n"
            for n in "abcdefgh"
        },
    }
    project = write(tmp_path / "p", files)
    by_pytest = run_pytest("-p", "no:randomly", "-k", "not dropped", cwd=project)
    assert counts_from_pytest(by_pytest.stdout) == {"pass": 8}
    assert "8 deselected" in by_pytest.stdout
    summary = project / "summary.txt"
    expected = summary.read_text()
    assert expected.splitlines()[:2] == ["8", "test_a.py::test_dropped"]
    summary.unlink()
    result = rt_test(project, "--parallel=2", "-p", "no:randomly", "-k", "not dropped")
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr)["pass"] == 8
    assert set((project / "ran.txt").read_text().split()) == {"1", "2"}  # both workers ran files
    assert summary.read_text() == expected


#: what a test module builds while imported is seen by the collector's introspection in every worker (leak
#: checks, objgraph, Hypothesis's register_random read gc.get_referrers and gc.get_objects)
REFERRERS = {
    f"test_gc{n}.py": """
        import gc

        class Marker:
            pass

        KEPT = Marker()

        def test_a_module_global_has_its_module_as_referrer():
            assert any(r is globals() for r in gc.get_referrers(KEPT))

        def test_the_collector_sees_objects_made_at_import():
            assert any(o is KEPT for o in gc.get_objects())
    """
    for n in range(2)
}


@pytest.mark.parametrize("start", list(STARTS))
def test_what_test_modules_built_stays_visible_to_the_collector(tmp_path: Path, start: str) -> None:
    """The zygote imports the test files before forking; what they built is not moved to gc's permanent
    generation (rt's own start-up is): frozen objects are invisible to ``gc.get_referrers``/``gc.get_objects``,
    so such a test passed in one process and failed in a forked worker."""
    project = write(tmp_path / "p", REFERRERS)
    result = rt_test(project, "--parallel=2", "--parallel-delay=0", env=environ(**STARTS[start]))
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 4, "fail": 0}


BIG_FILE = {
    "test_big.py": """
        import os
        from pathlib import Path

        import pytest

        LOG = Path(os.environ["RUN_LOG"])

        def note(text):
            with LOG.open("a") as log:
                log.write(f"{os.getpid()} {text}\\n")

        @pytest.fixture(scope="module")
        def per_module():
            note("module-setup")
            yield
            note("module-teardown")

        @pytest.mark.parametrize("n", range(30))
        def test_first(n, per_module):
            note(f"first-{n}")
            assert n != 7

        @pytest.mark.parametrize("n", range(12))
        def test_middle(n):
            note(f"middle-{n}")

        @pytest.mark.parametrize("n", range(30))
        def test_last(n, per_module):
            note(f"last-{n}")
            if n == 3:
                pytest.skip("skipped")
            print(f"output of last {n}")
            assert n != 20
    """,
}


#: a plugin whose ``pytest_configure`` starts a thread, as pytest-rerunfailures' does (its server for
#: pytest-xdist's workers) whenever pytest-xdist is installed
THREAD_PLUGIN = """
import threading

STOP = threading.Event()


def pytest_configure(config):
    threading.Thread(target=STOP.wait, daemon=True).start()
"""


@pytest.mark.parametrize("plugin", [False, True], ids=["no-plugin", "plugin-thread"])
def test_a_big_file_is_run_in_parts_by_several_workers_and_reported_whole(
    tmp_path: Path, plugin: bool
) -> None:
    """One file of 72 test functions is cut into parts that go to both workers; the file is still reported as
    one block, in its order, as in one process (console, JUnit, counts). Each part sets the module-scoped
    fixture up and tears it down, as a pytest-xdist worker that runs tests of the module does.

    The file imports pytest, so the installed plugins are configured in the zygote before it imports the file
    (as pytest configures them before collecting). A plugin that starts a thread then keeps the zygote from
    forking (pytest-rerunfailures' server, with pytest-xdist installed, as in this repository's environment:
    the file ran whole in the zygote until the installed plugins were left out here): the file is not cut,
    one worker runs it whole, with the same results."""
    one, many = two_copies(tmp_path, BIG_FILE)
    site = write(tmp_path / "site", {"thread_plugin.py": THREAD_PLUGIN})
    # only the plugin this test names: an installed one may start a thread too
    plugins = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if plugin:
        plugins.update(PYTHONPATH=str(site), PYTEST_PLUGINS="thread_plugin")
    junit = ("--reporter=junit", "--reporter-outfile=report.xml")
    single = rt_test(one, *junit, env=environ(RUN_LOG=str(tmp_path / "one.log"), **plugins))
    log = tmp_path / "many.log"
    parallel = rt_test(
        many, "--parallel=2", "--parallel-delay=0", *junit, env=environ(RUN_LOG=str(log), **plugins)
    )
    assert single.returncode == parallel.returncode == 1, parallel.stderr
    assert counts(parallel.stderr) == counts(single.stderr) == {"pass": 69, "fail": 2, "skip": 1}
    assert file_blocks(parallel.stderr) == file_blocks(single.stderr)
    assert junit_cases(many / "report.xml") == junit_cases(one / "report.xml")
    rows = [line.split() for line in log.read_text().splitlines()]
    ran = {name: pid for pid, name in rows if name.startswith(("first-", "middle-", "last-"))}
    assert len(ran) == 72
    assert len(set(ran.values())) == (1 if plugin else 2)  # both workers ran some of the file, or one all
    setups = [pid for pid, name in rows if name == "module-setup"]
    teardowns = [pid for pid, name in rows if name == "module-teardown"]
    assert sorted(setups) == sorted(teardowns) and set(setups) == set(ran.values())


#: classes that hand state to the next class (pyparsing's test_unit.py does so): such a file is never cut
CLASSES_IN_ORDER = {
    "test_classes.py": """
        import unittest

        import pytest

        STATE = {}

        class TestA(unittest.TestCase):
            def test_sets(self):
                STATE["set by"] = "TestA"

        class TestB(unittest.TestCase):
            def test_reads(self):
                assert STATE["set by"] == "TestA"

        @pytest.mark.parametrize("n", range(40))
        def test_after_the_classes(n):
            assert STATE["set by"] == "TestA"
    """,
}


def test_a_file_with_classes_is_run_whole(tmp_path: Path) -> None:
    project = write(tmp_path, CLASSES_IN_ORDER)
    result = rt_test(project, "--parallel=2", "--parallel-delay=0")
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 42, "fail": 0}


def test_pieces_are_cut_between_children_biggest_first() -> None:
    from rt_testrunner.plan import Work, cut, plan

    assert cut([1] * 10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert cut([1, 12, 1, 1], 2) == [(0, 2), (2, 4)]  # a big child is never cut
    assert cut([5], 4) == [(0, 1)]
    # file 0 (40 tests in 40 children) is cut for 2 workers into pieces of about a worker's share / 4, 8 tests at
    # least: the run is 63 tests (file 1 cannot be cut and counts as the mean of the others, 21), so 5 of 8
    pieces = plan([0, 1, 2], {0: (1,) * 40, 2: (1, 1)}, 2, timed=False)
    spans = sorted((w.start, w.stop) for w in pieces if w.index == 0)
    assert spans == [(0, 8), (8, 16), (16, 24), (24, 32), (32, 40)]
    assert {w.parts for w in pieces if w.index == 0} == {5}
    assert pieces[0] == Work(1) and pieces[-1] == Work(2)  # the biggest piece first, the smallest last
    assert plan([0, 1], {0: (1,) * 8, 1: (1,) * 8}, 2, timed=False) == [Work(0), Work(1)]  # too small to cut
    # with timings the files keep their order, a file's parts one after the other
    timed = plan([2, 0, 1], {0: (1,) * 40, 2: (1, 1)}, 2, timed=True)
    assert [w.index for w in timed] == [2, 0, 0, 0, 0, 0, 1]
    assert plan([0, 1], {0: (1,) * 40}, 1, timed=False) == [Work(0), Work(1)]
    assert Work(3).message() == ("run", 3) and Work(3, 2, 5, 1, 2).message() == ("run", 3, 2, 5)


LEFT_OPEN = {
    "test_leaves_a_file_open.py": """
        import os

        OUT = open(f"{os.environ['LEFT_OPEN']}.{os.getpid()}", "w")  # never closed: flushed at exit

        def test_writes_to_it():
            OUT.write("written by the test\\n")
    """,
    "test_other.py": "def test_other():\n    pass\n",
}


@pytest.mark.parametrize("mode", ["one-process", *STARTS])
def test_a_file_a_test_left_open_is_flushed_when_its_process_ends(tmp_path: Path, mode: str) -> None:
    """Every rt test process ends through the interpreter's teardown (with the collector frozen first,
    rt_testrunner.exiting), so a file a test module left open is flushed and closed, as under pytest: a
    forked worker that skipped the teardown (os._exit) lost what the test had written."""
    project = write(tmp_path / "p", LEFT_OPEN)
    args = () if mode == "one-process" else ("--parallel=2",)
    result = rt_test(project, *args, env=environ(LEFT_OPEN=str(tmp_path / "out"), **STARTS.get(mode, {})))
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 2, "fail": 0}
    # each process that imported the module opened a file of its own; the one that ran the test wrote it
    texts = sorted(path.read_text() for path in tmp_path.glob("out.*"))
    assert texts[-1] == "written by the test\n" and not any(texts[:-1]), texts


ZYGOTE_KILLED = {
    "test_a_kills.py": """
        import os
        import signal
        import time
        from pathlib import Path

        def test_kills_the_zygote():
            zygote = os.getppid()
            # the zygote leads a session of its own (the main process does not): it is not the main process
            session = int(Path(f"/proc/{zygote}/stat").read_text().rsplit(")", 1)[1].split()[3])
            assert session == zygote
            os.kill(zygote, signal.SIGKILL)
            time.sleep(600)  # the main process ends this worker when it sees its zygote gone
    """,
    "test_b.py": "def test_b():\n    pass\n",
    "test_c.py": "def test_c():\n    pass\n",
}


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")
def test_when_the_zygote_dies_its_workers_files_are_errors_and_fresh_workers_go_on(tmp_path: Path) -> None:
    """The zygote killed mid-run: the worker it forked is ended and its file reported as crashed (its exit
    status can no longer be known), and the remaining files run in fresh interpreters."""
    project = write(tmp_path, ZYGOTE_KILLED)
    result = rt_test(project, "--parallel=1")
    assert result.returncode == 1
    assert counts(result.stderr) == {"pass": 2, "fail": 0, "error": 1}, result.stderr
    blocks = file_blocks(result.stderr)
    assert "crashed (killed by signal SIGKILL)" in blocks["test_a_kills.py"]
    assert "(pass) test_b" in blocks["test_b.py"] and "(pass) test_c" in blocks["test_c.py"]


AT_EXIT = {
    f"test_x{i}.py": """
        import atexit
        import os
        import threading
        import time
        from pathlib import Path

        def test_leaves_work_for_the_end():
            log = Path(os.environ["EXIT_LOG"])
            pid = os.getpid()

            def late():
                time.sleep(0.2)
                with log.open("a") as out:
                    out.write(f"thread {pid}\\n")

            atexit.register(lambda: log.open("a").write(f"atexit {pid}\\n"))
            threading.Thread(target=late).start()  # not a daemon: the process waits for it
    """
    for i in range(3)
}


@pytest.mark.parametrize("start", list(STARTS))
def test_a_worker_ends_with_its_threads_and_atexit_handlers(tmp_path: Path, start: str) -> None:
    """A worker waits for the threads its tests left running and runs their atexit handlers before it exits,
    forked or fresh."""
    project = write(tmp_path / "p", AT_EXIT)
    log = tmp_path / "exit.txt"
    result = rt_test(project, "--parallel=2", env=environ(EXIT_LOG=str(log), **STARTS[start]))
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 3, "fail": 0}
    lines = log.read_text().splitlines()
    threads = [line.split()[1] for line in lines if line.startswith("thread")]
    handlers = [line.split()[1] for line in lines if line.startswith("atexit")]
    assert len(threads) == 3
    assert sorted(handlers) == sorted(threads)  # each in the worker that ran the test, after its thread


ASYNC_SUITE = {
    "async.test.py": """
        import os
        import sniffio
        from rt.test import expect, test

        @test("runs on the chosen backend")
        async def _():
            expect(sniffio.current_async_library()).to_be(os.environ["EXPECTED_BACKEND"])
    """,
    "test_async_pytest.py": """
        import os
        import sniffio

        async def test_pytest_style_async():
            assert sniffio.current_async_library() == os.environ["EXPECTED_BACKEND"]
    """,
    "sync.test.py": """
        from rt.test import test
        test("sync", lambda: None)
    """,
}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_async_tests_run_on_the_chosen_backend_in_workers(tmp_path: Path, backend: str) -> None:
    project = write(tmp_path, ASYNC_SUITE)
    env = environ(EXPECTED_BACKEND=backend)
    result = subprocess.run(
        [sys.executable, "-m", "rt", "--backend", backend, "test", "--parallel=2"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert counts(result.stderr) == {"pass": 3, "fail": 0}
    via_environment = rt_test(project, "--parallel=2", env={**env, "RT_BACKEND": backend})
    assert via_environment.returncode == 0, via_environment.stderr


def test_keyboard_interrupt_in_a_test_stops_the_run_with_a_summary(tmp_path: Path) -> None:
    files = {
        "test_a.py": "def test_interrupts():\n    raise KeyboardInterrupt\n",
        **{f"test_z{i}.py": "def test_fine():\n    pass\n" for i in range(3)},
    }
    project = write(tmp_path, files)
    result = rt_test(project, "--parallel=1", "--reporter=junit", "--reporter-outfile=r.xml")
    assert result.returncode == 2  # pytest's status for an interrupted run (a pytest suite: test_*.py)
    assert "Interrupted" in result.stderr
    assert counts(result.stderr)["fail"] == 1
    assert "(pass) test_fine" not in result.stderr  # no file starts after it
    assert (project / "r.xml").is_file()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_in_the_main_process_ends_the_workers_and_prints_the_summary(tmp_path: Path) -> None:
    started = tmp_path / "started"
    files = {
        "test_done.py": "def test_quick():\n    pass\n",
        "test_waits.py": f"""
            import time
            from pathlib import Path

            def test_waits():
                Path({str(started)!r}).write_text("x")
                time.sleep(300)
        """,
    }
    project = write(tmp_path / "p", files)
    process = subprocess.Popen(
        [sys.executable, "-m", "rt", "test", "--parallel=1"],
        cwd=project,
        env=environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        # a shell's background job (a CI script's `cmd &`) starts with SIGINT ignored, and Python keeps it
        # so: give rt the default disposition, so that Ctrl-C becomes its KeyboardInterrupt as in a terminal
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 240  # only bounds a hang
        while not started.exists():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 2  # pytest's status for an interrupted run (a pytest suite: test_*.py)
    assert "Interrupted" in stderr
    assert "test_waits" not in stderr.split("Interrupted")[1]


def test_coverage_of_the_workers_is_combined(tmp_path: Path) -> None:
    pytest.importorskip("coverage")
    files = {
        "lib.py": """
            def used(x):
                if x:
                    return 1
                return 2

            def other():
                return 3
        """,
        "test_one.py": "from lib import used\n\ndef test_one():\n    assert used(True) == 1\n",
        "test_two.py": "from lib import used\n\ndef test_two():\n    assert used(False) == 2\n",
    }
    one, many = two_copies(tmp_path, files)
    single = rt_test(one, "--coverage")
    parallel = rt_test(many, "--parallel=2", "--coverage")
    assert single.returncode == parallel.returncode == 0, parallel.stderr
    table = [line for line in single.stderr.splitlines() if "|" in line]
    assert any(line.startswith(" lib.py") for line in table), single.stderr
    assert [line for line in parallel.stderr.splitlines() if "|" in line] == table


def test_timings_are_written_and_start_the_slowest_first(tmp_path: Path) -> None:
    files = {f"test_{name}.py": "def test_it():\n    pass\n" for name in ("a", "b", "c")}
    project = write(tmp_path, files)
    first = rt_test(project, "--parallel=1", "--timings=t.json", "--update-timings")
    assert first.returncode == 0, first.stderr
    written = json.loads((project / "t.json").read_text())
    assert written["version"] == 1 and set(written["files"]) == set(files)
    (project / "t.json").write_text(json.dumps({"version": 1, "files": {"test_a.py": 1, "test_c.py": 900}}))
    ordered = rt_test(project, "--parallel=1", "--timings=t.json")
    # one worker: files without a timing first, then the slowest known one
    assert list(file_blocks(ordered.stderr)) == ["test_b.py", "test_c.py", "test_a.py"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--parallel=0",), '--parallel expects a positive integer, received "0"'),
        (("--parallel=two",), '--parallel expects a positive integer, received "two"'),
        (("--parallel", "--parallel-delay=-1"), "--parallel-delay expects a non-negative integer"),
        (("--update-timings",), "--update-timings needs --timings=<file>"),
        (("--timings=bad.json",), "--timings 'bad.json': not a timings file"),
    ],
)
def test_bad_values_are_one_line_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    project = write(tmp_path, {"test_x.py": "def test_x():\n    pass\n", "bad.json": "{not json"})
    result = rt_test(project, *args)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("module", ["rt_testrunner.worker", "rt_testrunner.zygote"])
def test_the_worker_refuses_to_run_by_hand(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", module],
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "started by `rt test --parallel`" in result.stderr


def test_timings_balance_the_shards_by_time(tmp_path: Path) -> None:
    names = ("a", "b", "c", "d", "e")
    project = write(tmp_path, {f"test_{n}.py": "def test_it():\n    pass\n" for n in names})
    known = {"test_a.py": 900, "test_b.py": 100, "test_c.py": 100, "test_d.py": 100}  # e: the mean, 300
    (project / "t.json").write_text(json.dumps({"version": 1, "files": known}))
    shards = []
    for index in (1, 2):
        result = rt_test(project, f"--shard={index}/2", "--timings=t.json")
        assert result.returncode == 0, result.stderr
        shards.append(sorted(file_blocks(result.stderr)))
    assert shards == [["test_a.py"], ["test_b.py", "test_c.py", "test_d.py", "test_e.py"]]
    plain = rt_test(project, "--shard=1/2")  # without timings: every other file by path, as before
    assert sorted(file_blocks(plain.stderr)) == ["test_a.py", "test_c.py", "test_e.py"]


def test_the_pipe_carries_every_field_of_the_test_events() -> None:
    import attrs

    from rt.events import Location, TestFailure, TestFinished, TestStarted, TestStatus
    from rt_testrunner import wire

    # the per-test events travel as tuples (wire._finished): a new field must be added there too
    assert [f.name for f in attrs.fields(TestFinished)] == [
        "file", "path", "status", "duration", "attempt", "run", "failure", "location", "expect_calls",
        "hook", "output", "reason", "earlier_failures", "suite_lines", "subtest_of", "subtests_passed",
        "properties", "at_setup", "counted", "own_style",
    ]  # fmt: skip
    assert [f.name for f in attrs.fields(TestFailure)] == [
        "message",
        "kind",
        "details",
        "location",
        "timed_out",
    ]
    where = Location("a/b.py", 3, 7)
    failure = TestFailure("boom", "ValueError", "details\nmore", where, True)
    events = [
        TestStarted("a/b.py", ("group", "name"), 2, 3),
        TestFinished("a/b.py", ("t",), TestStatus.PASS, 0.5),
        TestFinished(
            "a/b.py",
            ("group", "t [x]"),
            TestStatus.XFAIL,
            1.25,
            2,
            3,
            failure,
            where,
            4,
            "after_all",
            "out\x00put",
            "why",
            (failure, TestFailure("first")),
            (5, 0),
            "t",
            2,
            (("key", "value"),),
            True,
            False,
            True,
        ),
    ]
    read_fd, write_fd = os.pipe()
    sender, receiver = wire.Channel(-1, write_fd), wire.Channel(read_fd, -1)
    try:
        for event in events:
            sender.send((wire.EVENT, event))
        sender.send((wire.FILE, "anything else", wire.FileDone(3)))
        for event in events:
            assert receiver.recv() == (wire.EVENT, event)
        assert receiver.recv() == (wire.FILE, "anything else", wire.FileDone(3))
    finally:
        sender.close()
        receiver.close()


def test_the_reader_takes_every_message_the_pipe_holds_at_once() -> None:
    """The main process's reader thread wakes once per batch of a worker's messages: one read takes all the
    pipe holds. A message that cannot be read comes after those before it (then the error)."""
    import struct

    from rt.events import TestStarted
    from rt_testrunner import wire

    read_fd, write_fd = os.pipe()
    reader, writer = wire.Channel(read_fd, -1), wire.Channel(-1, write_fd)
    try:
        for n in range(3):
            writer.send((wire.EVENT, TestStarted("t.py", (f"test_{n}",), 1, 1)))
        assert [m[1].path for m in reader.recv_many()] == [("test_0",), ("test_1",), ("test_2",)]
        writer.send((wire.READY,))
        bad = b"P" + b"not a pickle"
        os.write(write_fd, struct.pack("<I", len(bad)) + bad)
        assert reader.recv_many() == [(wire.READY,)]
        with pytest.raises(Exception, match="pickle|load"):
            reader.recv_many()
        writer.send((wire.DONE,))
        assert reader.recv() == (wire.DONE,)
    finally:
        reader.close()
        writer.close()


#: a conftest.py whose session end reads the run's reports (``terminalreporter.stats``), as pytest-md-report's
#: table and summary plugins do, and a test file of each outcome, copied four times
SESSION_END = {
    "conftest.py": """
    CATEGORIES = ("passed", "failed", "skipped", "xfailed", "error")


    def pytest_terminal_summary(terminalreporter, exitstatus, config):
        stats = terminalreporter.stats
        with open("summary.txt", "w") as out:
            for category in CATEGORIES:
                out.write(f"{category}: {sorted(report.nodeid for report in stats.get(category, []))}\\n")
            out.write(f"exitstatus {exitstatus}\\n")
        terminalreporter.write_line(f"summary of {sum(len(stats.get(c, [])) for c in CATEGORIES)} reports")


    def pytest_unconfigure(config):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        seen = sorted((key, len(value)) for key, value in reporter.stats.items())
        if seen:  # as pytest-md-report prints its table
            reporter.write_line(f"unconfigure saw {seen}")
        with open("unconfigure.txt", "a") as out:
            out.write(f"{seen}\\n")
    """,
    **{
        f"test_outcomes_{name}.py": """
        import os
        import time
        import warnings

        import pytest


        def test_passes():
            warnings.warn("in stats['warnings']", UserWarning)
            # under --parallel, each test waits (5 s at most) until both workers have run one: the first
            # worker would otherwise run every file before the second one starts
            with open(os.environ["RUN_LOG"], "a") as log:
                log.write(f"{os.getpid()}\\n")
            for _ in range(50 if os.environ.get("BOTH_WORKERS") else 0):
                with open(os.environ["RUN_LOG"]) as log:
                    if len(set(log.read().split())) == 2:
                        break
                time.sleep(0.1)


        def test_fails():
            assert 0


        @pytest.mark.skip(reason="not here")
        def test_skipped():
            pass


        @pytest.mark.xfail(reason="known")
        def test_xfails():
            assert 0


        @pytest.fixture
        def broken():
            raise RuntimeError("set-up")


        def test_setup_error(broken):
            pass
        """
        for name in "abcd"
    },
}


@pytest.mark.parametrize("start", list(STARTS))
def test_the_session_end_sees_the_whole_run_once(tmp_path: Path, start: str) -> None:
    """pytest-xdist calls ``pytest_terminal_summary`` once, in its controller, which has every report; rt
    called it in each worker, with an empty ``terminalreporter.stats``: the summary was printed twice, and
    what a plugin wrote at the end depended on the worker that ended last. Now the last worker to be done
    waits for the others to end their sessions, then ends its own with the whole run's results: the
    summary is printed once, with the one-process run's reports, a summary an unconfigure hook prints from
    them too (the other workers have none, as pytest-xdist's workers' reports go to the controller), and
    what is written last at the end is the one-process run's. The stats' ``warnings`` are the whole run's
    there too, and none in the other workers (since session 14: each worker had its own)."""
    one, many = two_copies(tmp_path, SESSION_END)
    single = rt_test(one, env=environ(RUN_LOG=str(tmp_path / "one.log"), **STARTS[start]))
    log = tmp_path / "many.log"
    parallel = rt_test(
        many,
        "--parallel=2",
        "--parallel-delay=0",
        env=environ(RUN_LOG=str(log), BOTH_WORKERS="1", **STARTS[start]),
    )
    assert single.stdout.count("summary of 20 reports") == 1, single.stdout + single.stderr
    assert parallel.stdout.count("summary of") == 1, parallel.stdout + parallel.stderr
    assert "summary of 20 reports" in parallel.stdout, parallel.stdout + parallel.stderr
    assert parallel.stdout.count("unconfigure saw") == 1, parallel.stdout + parallel.stderr
    assert (many / "summary.txt").read_text() == (one / "summary.txt").read_text()
    assert "('warnings', 4)" in (one / "unconfigure.txt").read_text()
    # the other worker's unconfigure hook saw no report; the last one's, every report of the run
    assert (many / "unconfigure.txt").read_text().splitlines()[-1:] == (
        one / "unconfigure.txt"
    ).read_text().splitlines()
    assert len(set(log.read_text().split())) == 2  # both workers ran tests
