"""What pytest reports besides the outcome counts, reported by ``rt test`` too: the summary's warnings count,
``record_testsuite_property`` in the JUnit file, ``log_cli`` live logging.

Each test writes a small project, runs it under pytest and under ``rt test``, and compares what both report.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from rt.testing import cli_environ, run_cli, run_pytest, summary_counts, write_files

WARNING_PROJECT = {
    "test_warns.py": """
    import warnings

    warnings.warn("at import", UserWarning)  # recorded while collecting

    def test_one_warning():
        warnings.warn("once", UserWarning)

    def test_same_place_twice():
        for _ in range(2):
            warnings.warn("twice, one place", UserWarning)  # the default action shows it once

    def test_deprecations_always_count():
        for _ in range(2):
            warnings.warn("old", DeprecationWarning)

    def test_quiet():
        pass

    @__import__("pytest").mark.filterwarnings("ignore::UserWarning")
    def test_ignored():
        warnings.warn("ignored", UserWarning)
    """,
    "test_more.py": """
    import warnings

    def test_other_file():
        warnings.warn("elsewhere", RuntimeWarning)
    """,
}

_PYTEST_WARNINGS = re.compile(r"(\d+) warnings? in ")


def _pytest_warnings(output: str) -> int:
    found = _PYTEST_WARNINGS.search(output.strip().splitlines()[-1])
    return int(found.group(1)) if found else 0


@pytest.mark.parametrize("arguments", [(), ("--parallel=2",)], ids=["one_process", "parallel"])
def test_the_summary_counts_warnings_as_pytest_does(tmp_path: Path, arguments: tuple[str, ...]) -> None:
    """pytest's last line says "N warnings" (the warnings recorded while collecting and around each test,
    after the filters); rt's summary has ` N warnings`, also when workers ran the files."""
    write_files(tmp_path, WARNING_PROJECT)
    expected = _pytest_warnings(run_pytest(cwd=tmp_path).stdout)
    assert expected == 6
    rt_run = run_cli("test", *arguments, cwd=tmp_path)
    assert summary_counts(rt_run.stderr)["pass"] == 6, rt_run.output
    assert f" {expected} warnings\n" in rt_run.stderr, rt_run.output


def test_no_warnings_no_count_and_one_is_singular(tmp_path: Path) -> None:
    write_files(tmp_path, {"test_a.py": "import warnings\n\ndef test_a():\n    warnings.warn('x')\n"})
    assert _pytest_warnings(run_pytest(cwd=tmp_path).stdout) == 1
    assert " 1 warning\n" in run_cli("test", cwd=tmp_path).stderr
    write_files(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    assert _pytest_warnings(run_pytest(cwd=tmp_path).stdout) == 0
    assert "warning" not in run_cli("test", cwd=tmp_path).stderr
    # -p no:warnings: pytest records none, nor does rt
    write_files(tmp_path, {"test_a.py": "import warnings\n\ndef test_a():\n    warnings.warn('x')\n"})
    assert _pytest_warnings(run_pytest("-p", "no:warnings", cwd=tmp_path).stdout) == 0
    assert " warning" not in run_cli("test", "-p", "no:warnings", cwd=tmp_path).stderr


PROPERTY_PROJECT = {
    "test_first.py": """
    def test_records(record_testsuite_property):
        record_testsuite_property("ARCH", "PPC")
        record_testsuite_property("STORAGE_TYPE", "CEPH")

    def test_plain():
        pass
    """,
    "test_second.py": """
    def test_records_a_number(record_testsuite_property):
        record_testsuite_property("RUNS", 3)
    """,
}


def _suite_properties(suite: ElementTree.Element) -> list[tuple[str | None, str | None]]:
    return [(p.get("name"), p.get("value")) for p in suite.findall("./properties/property")]


@pytest.mark.parametrize("arguments", [(), ("--parallel=2",)], ids=["one_process", "parallel"])
def test_record_testsuite_property_is_written_to_the_junit_file(
    tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    """pytest's junitxml writes the run's ``record_testsuite_property`` pairs (values as text) as the
    ``<properties>`` of its ``<testsuite>``; rt writes them once, in the first file's ``<testsuite>`` (its
    layout has one per file), also when workers recorded them (rt wrote them in each file's: a reader of the
    file's properties saw each pair twice)."""
    write_files(tmp_path, PROPERTY_PROJECT)
    run_pytest("--junitxml", str(tmp_path / "pytest.xml"), cwd=tmp_path)
    expected = _suite_properties(ElementTree.parse(tmp_path / "pytest.xml").getroot().find("testsuite"))  # type: ignore[arg-type]
    assert sorted(expected) == [("ARCH", "PPC"), ("RUNS", "3"), ("STORAGE_TYPE", "CEPH")]
    run = run_cli("test", *arguments, "--junitxml", str(tmp_path / "rt.xml"), cwd=tmp_path)
    assert run.code == 0, run.output
    suites = ElementTree.parse(tmp_path / "rt.xml").getroot().findall("testsuite")
    assert len(suites) == 2
    assert sorted(_suite_properties(suites[0])) == sorted(expected)
    assert suites[0][0].tag == "properties"  # the schema's place for them: the suite's first child
    assert _suite_properties(suites[1]) == []
    every = [(p.get("name"), p.get("value")) for p in ElementTree.parse(tmp_path / "rt.xml").iter("property")]
    assert sorted(every) == sorted(expected)


LIVE_LOG_PROJECT = {
    "pytest.ini": "[pytest]\nlog_cli = true\nlog_cli_level = INFO\n",
    "test_live.py": """
    import logging

    log = logging.getLogger("app")

    def test_logs():
        log.debug("below the level")
        log.info("shown while the test runs")
        print("captured, not shown")

    def test_fails():
        log.warning("a warning first")
        assert False
    """,
}


def test_log_cli_shows_records_as_they_happen(tmp_path: Path) -> None:
    """``log_cli = true``: pytest prints each record at ``log_cli_level`` as it is emitted, under a ``live log
    call`` separator, in its default format, on stdout (its terminal reporter's stream); rt prints the same
    lines there, before the test's result line (it runs live, not after the test), and the captured output
    stays captured."""
    write_files(tmp_path, LIVE_LOG_PROJECT)
    pytest_run = run_pytest(cwd=tmp_path)
    rt_run = run_cli("test", cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 1, "fail": 1}
    for line in (
        "INFO     app:test_live.py:8 shown while the test runs",
        "WARNING  app:test_live.py:12 a warning first",
        "-" * 28 + " live log call " + "-" * 29,
    ):
        assert line in pytest_run.stdout, pytest_run.output
        assert line in rt_run.stdout, rt_run.output
    assert "live log" not in rt_run.stderr and "shown while the test runs" not in rt_run.stderr
    assert "below the level" not in pytest_run.stdout and "below the level" not in rt_run.output
    assert "captured, not shown" not in rt_run.output
    merged = subprocess.run(
        [sys.executable, "-m", "rt", "test"],
        cwd=tmp_path,
        env=cli_environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        check=False,
    ).stdout
    assert merged.index("shown while the test runs") < merged.index("(pass) test_logs"), merged
    # without log_cli nothing is live (the warning is only in the failure's captured log)
    write_files(tmp_path, {"pytest.ini": "[pytest]\n"})
    quiet = run_cli("test", cwd=tmp_path)
    assert "live log" not in quiet.output and "shown while the test runs" not in quiet.output
    # --log-cli-level on the command line turns it on too, as pytest's
    louder = run_cli("test", "--log-cli-level=DEBUG", cwd=tmp_path)
    assert "DEBUG    app:test_live.py:7 below the level" in louder.stdout, louder.output
    assert (
        "DEBUG    app:test_live.py:7 below the level"
        in run_pytest("--log-cli-level=DEBUG", cwd=tmp_path).stdout
    )


def test_a_reports_keywords_are_pytests_and_k_matches_the_nodes_names(tmp_path: Path) -> None:
    """``report.keywords`` (pytest-json-report lists them) holds the names of the test's nodes up to the
    rootdir's folder and the session's ``""``, its marks, its function's attributes and its parameters' id,
    as pytest's ``item.keywords``: rt's lacked the rootdir's and the session's and the id, and held the
    function's name beside the parametrized one and the names of the class's bases. ``-k Base`` then ran the
    subclass's tests, where pytest's ``-k`` matches only the names of the test's nodes (1 passed: test_base by
    its own name). The same under ``--parallel 2``."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers =\n    slow: slow tests\n",
            "conftest.py": """
            def pytest_runtest_logreport(report):
                if report.when == "call":
                    with open("keywords.txt", "a") as out:
                        out.write(f"{report.nodeid} {sorted(report.keywords)}\\n")
            """,
            "tests/sub/test_kinds.py": """
            import pytest


            class Base:
                def test_base(self):
                    pass


            @pytest.mark.slow
            class TestChild(Base):
                @pytest.mark.parametrize("x", [1])
                def test_own(self, x):
                    pass


            def test_plain():
                pass
            """,
        },
    )
    written = tmp_path / "keywords.txt"
    pytest_run = run_pytest(cwd=tmp_path)
    expected = sorted(written.read_text().splitlines())
    own = next(line for line in expected if "test_own[1]" in line)
    assert all(f"'{name}'" in own for name in ("", "1", "TestChild", "slow", tmp_path.name)), (
        pytest_run.output
    )
    assert "Base" not in own and "'test_own'" not in own, expected
    for args in ((), ("--parallel", "2")):
        written.unlink()
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert sorted(written.read_text().splitlines()) == expected, rt_run.output
    selected = run_cli("test", "-k", "Base", cwd=tmp_path)
    assert summary_counts(selected.stderr) == {"pass": 1}, selected.output
    assert "test_base" in selected.output, selected.output


JUNIT_MESSAGES_PROJECT = {
    "test_messages.py": """
    import pytest


    @pytest.fixture
    def broken():
        raise RuntimeError("fixture broke")


    @pytest.fixture
    def breaks_after():
        yield
        raise OSError("teardown broke")


    def test_assert_with_message():
        assert 1 == 2, "plain message"


    def test_assert_without_message():
        assert 1 == 2


    def test_assert_on_text():
        value = "a"
        assert value == "b"


    def test_assert_on_quoted_text():
        assert "it's" == "b"


    def test_raised_assertion():
        raise AssertionError("explicit")


    def test_bare_assertion():
        raise AssertionError


    def test_value_error():
        raise ValueError("bad value")


    def test_pytest_fail():
        pytest.fail("x")


    def test_pytest_fail_without_trace():
        pytest.fail("first\\nsecond", pytrace=False)


    def test_fixture_error(broken):
        pass


    def test_teardown_error(breaks_after):
        pass


    class TestBroken:
        @pytest.mark.parametrize("missing", [1])
        def test_it(self):
            pass
    """,
}


def _junit_messages(path: Path) -> dict[str, list[tuple[str, str | None]]]:
    root = ElementTree.parse(path).getroot()
    return {
        str(case.get("name")): [
            (child.tag, child.get("message")) for child in case if child.tag != "system-out"
        ]
        for case in root.iter("testcase")
    }


def test_the_junit_messages_are_pytests_crash_lines(tmp_path: Path) -> None:
    """pytest's junitxml writes a failure's ``reprcrash.message`` (the exception's type name and text, an
    assert's explanation without ``AssertionError: `` when its repr begins ``AssertionError('assert ``), and
    an error as ``failed on setup with "<crash>"`` / ``failed on teardown with "<crash>"``. rt wrote an
    assertion's text and ``pytest.fail``'s without the type name (``plain message`` for pytest's
    ``AssertionError: plain message``) and its own ``error at setup: ...`` line. pytest 9.2: the same."""
    write_files(tmp_path, JUNIT_MESSAGES_PROJECT)
    arguments = ("-p", "no:randomly", "--continue-on-collection-errors")
    pytest_run = run_pytest(*arguments, "--junitxml", "pytest.xml", cwd=tmp_path)
    expected = _junit_messages(tmp_path / "pytest.xml")
    assert expected["test_assert_with_message"] == [
        ("failure", "AssertionError: plain message\nassert 1 == 2")
    ], pytest_run.output
    assert expected["test_fixture_error"] == [
        ("error", 'failed on setup with "RuntimeError: fixture broke"')
    ], pytest_run.output
    assert expected["TestBroken"] == [("error", "collection failure")], pytest_run.output
    rt_run = run_cli("test", *arguments, "--junitxml", "rt.xml", cwd=tmp_path)
    assert _junit_messages(tmp_path / "rt.xml") == expected, rt_run.output
