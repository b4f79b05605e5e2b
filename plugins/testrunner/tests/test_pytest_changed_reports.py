"""A report a ``pytest_runtest_makereport`` hook changes counts as the changed report (issue 15, session 16).

pytest's terminal, JUnit file and exit status count the reports the hooks return, not the exceptions behind
them: a plugin's wrapper that sets ``report.outcome`` (pytest-retry once a retry passed, soft-assertion
plugins failing a test that raised nothing, a conftest.py skipping a test that failed for want of a server)
or answers another report (``outcome.force_result``) changes the test's outcome. Each test writes a small
project, runs pytest 9.2 and ``rt test`` on it and compares the counts, the exit status and the JUnit files.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rt.testing import (
    counts_from_pytest,
    run_cli,
    run_pytest,
    same_counts_as_pytest,
    summary_counts,
    write_files,
)

CHANGING_CONFTEST = """
import pytest

CHANGES = ("to_pass", "to_fail", "to_skip", "to_xfail", "forced", "teardown_pass", "keep")


def pytest_configure(config):
    for name in CHANGES:
        config.addinivalue_line("markers", name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    marked = {name for name in CHANGES if item.get_closest_marker(name)}
    if report.when == "call" and "to_pass" in marked and report.failed:
        report.outcome = "passed"
        report.longrepr = None
    if report.when == "call" and "to_fail" in marked and report.passed:
        report.outcome = "failed"
        report.longrepr = "made to fail"
    if report.when == "call" and "to_skip" in marked:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), 1, "Skipped: made to skip")
    if report.when == "call" and "to_xfail" in marked and report.failed:
        report.outcome = "skipped"
        report.wasxfail = "made to xfail"
    if report.when == "call" and "forced" in marked:
        forced = pytest.TestReport(
            report.nodeid, report.location, report.keywords, "passed", None, "call", user_properties=[]
        )
        outcome.force_result(forced)
    if report.when == "teardown" and "teardown_pass" in marked and report.failed:
        report.outcome = "passed"
        report.longrepr = None
"""


def _junit(path: Path) -> tuple[dict[str, str | None], dict[str, list[tuple[str, str | None]]]]:
    """A JUnit report's totals (``<testsuites>`` for rt's, its first ``<testsuite>`` for pytest's) and each
    ``<testcase>``'s failures, errors and skips as (tag, message), by name."""
    root = ET.parse(path).getroot()
    totals = root if root.get("tests") is not None else root[0]
    cases: dict[str, list[tuple[str, str | None]]] = {}
    for case in root.iter("testcase"):
        elements = cases.setdefault(str(case.get("name")), [])
        elements.extend((child.tag, child.get("message")) for child in case if child.tag != "properties")
    return {k: totals.get(k) for k in ("tests", "failures", "errors", "skipped")}, cases


def test_a_makereport_wrapper_changes_the_outcome_rt_counts(tmp_path: Path) -> None:
    """Each change a wrapper makes to the report of a phase: a failed call made passed, a passed one made
    failed, one made skipped and one made xfailed, a report replaced with ``force_result``, a failed teardown
    made passed; a test the wrapper leaves alone keeps its outcome. pytest 9.2: 2 failed, 3 passed, 1
    skipped, 2 xfailed; rt counted the exceptions (2 passed, 5 failed, 1 error, 1 xfailed). The JUnit files
    give the same totals and the same failure and skip messages, and both runs end with status 1."""
    write_files(
        tmp_path,
        {
            "conftest.py": CHANGING_CONFTEST,
            "test_changed.py": """
            import pytest


            @pytest.mark.to_pass
            def test_failed_made_passed():
                assert False


            @pytest.mark.to_fail
            def test_passed_made_failed():
                pass


            @pytest.mark.to_skip
            def test_failed_made_skipped():
                assert False


            @pytest.mark.to_xfail
            def test_failed_made_xfailed():
                raise ValueError("flaky")


            @pytest.mark.forced
            def test_failed_report_replaced():
                assert 0


            @pytest.fixture
            def broken_teardown():
                yield
                raise RuntimeError("teardown")


            @pytest.mark.teardown_pass
            def test_teardown_error_made_passed(broken_teardown):
                pass


            @pytest.mark.keep
            def test_failed_kept():
                assert 1 == 2


            @pytest.mark.keep
            @pytest.mark.xfail(reason="known")
            def test_xfail_kept():
                assert 0
            """,
        },
    )
    pytest_run = run_pytest("-p", "no:randomly", "--junitxml=pytest.xml", cwd=tmp_path)
    rt_run = run_cli("test", "--junitxml=rt.xml", cwd=tmp_path)
    assert "2 failed, 3 passed, 1 skipped, 2 xfailed" in pytest_run.stdout, pytest_run.output
    expected_totals, expected_cases = _junit(tmp_path / "pytest.xml")
    totals, cases = _junit(tmp_path / "rt.xml")
    assert totals == expected_totals, rt_run.output
    assert (
        cases["test_passed_made_failed"]
        == [("failure", "made to fail")]
        == expected_cases["test_passed_made_failed"]
    )
    assert cases["test_failed_made_skipped"] == [("skipped", "made to skip")]
    assert {name for name, found in cases.items() if found} == {
        name for name, found in expected_cases.items() if found
    }
    assert (pytest_run.code, rt_run.code) == (1, 1)
    assert "2 fail" in rt_run.stderr, rt_run.output


def test_a_run_whose_failures_a_wrapper_made_passed_is_green(tmp_path: Path) -> None:
    """Every failure made passed by the wrapper: pytest's run ends with status 0, and so does rt's (it had
    status 1 and 1 failed, 1 error)."""
    write_files(
        tmp_path,
        {
            "conftest.py": CHANGING_CONFTEST,
            "test_green.py": """
            import pytest


            @pytest.fixture
            def broken_teardown():
                yield
                raise RuntimeError("teardown")


            @pytest.mark.to_pass
            def test_failed_made_passed():
                assert False


            @pytest.mark.teardown_pass
            def test_teardown_error_made_passed(broken_teardown):
                pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "2 passed" in pytest_run.stdout, pytest_run.output
    assert (pytest_run.code, rt_run.code) == (0, 0), rt_run.output


RETRYING_CONFTEST = """
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "retried(times)")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    mark = item.get_closest_marker("retried")
    if report.when != "call" or not report.failed or mark is None:
        return
    hook = item.ihook
    for attempt in range(mark.args[0]):
        hook.pytest_runtest_teardown(item=item, nextitem=None)
        report.outcome = "rerun"
        hook.pytest_runtest_logreport(report=report)
        item._initrequest()
        hook.pytest_runtest_setup(item=item)
        again = pytest.CallInfo.from_call(lambda: hook.pytest_runtest_call(item=item), when="call")
        retry = pytest.TestReport.from_item_and_call(item, again)
        report.outcome, report.longrepr = retry.outcome, retry.longrepr
        if retry.passed:
            return


def pytest_report_teststatus(report):
    if report.outcome == "rerun":
        return "rerun", "R", "RERUN"
"""


def test_a_retry_inside_the_makereport_hook_counts_as_its_last_attempt(tmp_path: Path) -> None:
    """pyrate-limiter 4.5.1 with pytest-retry 1.7.0 (``retries = 2``, ``retry_outcome = "rerun"``): the
    plugin's wrapper runs a failed test again through ``item.ihook`` inside the call's makereport, logs each
    failed attempt as a ``rerun`` report and gives the call's report the last attempt's outcome. A test that
    passes on a retry passes (rt counted it failed: 331 passed, 3 failed where pytest has 332 and 2), and
    each logged attempt is a rerun in the summary, as pytest counts its ``rerun`` category. pytest 9.2: 1
    failed, 2 passed, 3 rerun."""
    write_files(
        tmp_path,
        {
            "conftest.py": RETRYING_CONFTEST,
            "test_retried.py": """
            import pytest

            RUNS = []


            @pytest.fixture
            def attempt():
                RUNS.append("set up")
                return RUNS.count("set up")


            @pytest.mark.retried(2)
            def test_passes_on_its_second_attempt(attempt):
                assert attempt >= 2


            @pytest.mark.retried(2)
            def test_fails_each_attempt():
                assert False


            def test_plain():
                pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "1 failed, 2 passed, 3 rerun" in pytest_run.stdout, pytest_run.output
    assert (pytest_run.code, rt_run.code) == (1, 1)


@pytest.mark.parametrize("arguments", [(), ("--parallel", "2")], ids=["one_process", "parallel"])
def test_a_plugins_own_category_of_logged_reports_is_in_the_summary(
    tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    """pytest-retry 1.7.0's default ``retry_outcome`` is ``retried``, a category of its own that pytest's
    summary line counts after its own (``1 failed, 2 passed, 3 retried``); rt's summary said nothing of it.
    The same retrying wrapper as above with that word: pytest 9.2 and rt the same counts and ``3 retried``."""
    write_files(
        tmp_path,
        {
            "conftest.py": RETRYING_CONFTEST.replace('"rerun"', '"retried"').replace("RERUN", "RETRIED"),
            "test_retried.py": """
            import pytest

            RUNS = []


            @pytest.mark.retried(2)
            def test_passes_on_its_second_attempt():
                RUNS.append(1)
                assert len(RUNS) >= 2


            @pytest.mark.retried(2)
            def test_fails_each_attempt():
                assert False


            def test_plain():
                pass
            """,
            "test_more.py": "def test_more():\n    pass\n",
        },
    )
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    assert "1 failed, 3 passed, 3 retried" in pytest_run.stdout, pytest_run.output
    rt_run = run_cli("test", "-p", "no:randomly", *arguments, cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == counts_from_pytest(pytest_run.stdout), rt_run.output
    assert "\n 3 retried\n" in rt_run.stderr, rt_run.output


#: a plain ``pytest_runtest_protocol`` running pytest's ``runtestprotocol`` and logging its reports (flaky's
#: and repeat plugins' way)
PLAIN_PROTOCOL = """

from _pytest.runner import runtestprotocol


def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in runtestprotocol(item, nextitem=nextitem, log=False):
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""


@pytest.mark.parametrize("arguments", [(), ("--parallel", "2")], ids=["one_process", "parallel"])
def test_each_report_a_plain_protocol_logs_is_counted(tmp_path: Path, arguments: tuple[str, ...]) -> None:
    """A plain ``pytest_runtest_protocol`` that runs a test twice and logs both runs' reports (flaky 3.8.1
    runs an xfail test twice): pytest's terminal counts every logged report, 2 xfailed for one test. rt took
    the last report of each phase and counted the test once. pytest 9.2: 1 failed, 3 passed, 2 skipped,
    2 xfailed for these four tests run twice each (one failing its first run only)."""
    write_files(
        tmp_path,
        {
            "conftest.py": PLAIN_PROTOCOL.replace(
                "    for report in runtestprotocol(",
                "    for report in runtestprotocol(item, nextitem=item, log=False):\n"
                "        item.ihook.pytest_runtest_logreport(report=report)\n"
                "    for report in runtestprotocol(",
            ),
            "test_twice.py": """
            import pytest

            RUNS = []


            @pytest.mark.xfail(reason="known")
            def test_expected():
                assert False


            def test_passes():
                pass


            def test_fails_first():
                RUNS.append(1)
                assert len(RUNS) > 1


            def test_skips():
                pytest.skip("not here")
            """,
        },
    )
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    assert "1 failed, 3 passed, 2 skipped, 2 xfailed" in pytest_run.stdout, pytest_run.output
    rt_run = run_cli("test", "-p", "no:randomly", *arguments, cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == counts_from_pytest(pytest_run.stdout), rt_run.output


def test_a_plain_protocols_report_a_wrapper_changed_counts_as_changed(tmp_path: Path) -> None:
    """A plain ``pytest_runtest_protocol`` that runs pytest's ``runtestprotocol`` and logs the reports (flaky's
    and repeat plugins' way) with a makereport wrapper that skips a failed test: the logged report is
    skipped, and rt raised the call's own error for it (a failure). pytest 9.2: 1 passed, 1 skipped."""
    write_files(
        tmp_path,
        {
            "conftest.py": CHANGING_CONFTEST + PLAIN_PROTOCOL,
            "test_protocol.py": """
            import pytest


            @pytest.mark.to_skip
            def test_failed_made_skipped():
                assert False


            def test_plain():
                pass
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "1 passed, 1 skipped" in pytest_run.stdout, pytest_run.output


def test_a_set_up_error_is_rerun_as_pytest_rerunfailures_reruns_it(tmp_path: Path) -> None:
    """pytest-rerunfailures 16.7 reruns a test whose set-up failed as it reruns a failed call (any failed
    phase's report becomes a ``rerun``): a fixture that fails once, then passes, gives a passed test and one
    rerun. rt retried failed calls only: the set-up error stayed an error. pytest 9.2: 1 failed, 2 passed,
    1 error, 4 rerun."""
    write_files(
        tmp_path,
        {
            "test_reruns.py": """
            import pytest

            RUNS = {}


            def count(name):
                RUNS[name] = RUNS.get(name, 0) + 1
                return RUNS[name]


            @pytest.fixture
            def broken_once():
                if count("once") < 2:
                    raise RuntimeError("set-up")


            @pytest.fixture
            def always_broken():
                raise RuntimeError("set-up")


            @pytest.mark.flaky(reruns=2)
            def test_set_up_error_then_passes(broken_once):
                pass


            @pytest.mark.flaky(reruns=1)
            def test_set_up_error_each_time(always_broken):
                pass


            @pytest.mark.flaky(reruns=2)
            def test_call_fails_then_passes():
                assert count("call") >= 2


            @pytest.mark.flaky(reruns=1)
            def test_call_fails_each_time():
                assert False
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly", "-p", "rerunfailures")
    assert "1 failed, 2 passed, 1 error, 4 rerun" in pytest_run.stdout, pytest_run.output


def test_a_failed_teardown_is_rerun_as_pytest_rerunfailures_reruns_it(tmp_path: Path) -> None:
    """pytest-rerunfailures 16.7 reruns a test whose teardown failed, after logging the passed (or skipped)
    call report of that attempt, which pytest counts and lists as a result of its own. rt left the teardown
    error an error and did not rerun: 2 passed, 1 error where pytest 9.2 counts 4 passed, 1 skipped,
    2 rerun (one process and ``--parallel 2``; the JUnit file lists each result as pytest's)."""
    write_files(
        tmp_path,
        {
            "test_teardown_reruns.py": """
            import pytest

            RUNS = {}


            def fixture_failing_once(name):
                @pytest.fixture
                def fixture():
                    yield
                    RUNS[name] = RUNS.get(name, 0) + 1
                    if RUNS[name] == 1:
                        raise RuntimeError("teardown fails once")

                return fixture


            passing = fixture_failing_once("passing")
            skipping = fixture_failing_once("skipping")


            @pytest.mark.flaky(reruns=2)
            def test_passes(passing):
                pass


            @pytest.mark.flaky(reruns=2)
            def test_skips(skipping):
                pytest.skip("skipped in the call")


            def test_plain():
                pass
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly", "-p", "rerunfailures")
    assert "3 passed, 2 skipped, 2 rerun" in pytest_run.stdout, pytest_run.output
    parallel = run_cli("test", "-p", "no:randomly", "--parallel", "2", cwd=tmp_path)
    assert summary_counts(parallel.stderr) == counts_from_pytest(pytest_run.stdout), parallel.output
    run_pytest("-p", "no:randomly", "--junitxml", "pytest.xml", cwd=tmp_path)
    run_cli("test", "-p", "no:randomly", "--junitxml", "rt.xml", cwd=tmp_path)
    expected = [case.get("name") for case in ET.parse(tmp_path / "pytest.xml").getroot().iter("testcase")]
    assert expected == ["test_passes", "test_passes", "test_skips", "test_skips", "test_plain"]
    assert [case.get("name") for case in ET.parse(tmp_path / "rt.xml").getroot().iter("testcase")] == expected


def test_a_failed_set_up_a_hook_made_passed_is_not_set_up_again_for_the_call(tmp_path: Path) -> None:
    """A set-up report a ``pytest_runtest_makereport`` hook turns into passed runs the call, as pytest runs it,
    with the fixture values that were set up: pytest's call fails with ``KeyError: 'broken'`` for the fixture
    whose set-up raised. rt asked for that fixture again in the call (its set-up ran twice, the call failed
    with the fixture's error). pytest 9.2: 1 failed, 1 passed, the fixture set up once, the same message."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            @pytest.hookimpl(wrapper=True)
            def pytest_runtest_makereport(item, call):
                report = yield
                if report.when == "setup" and report.failed:
                    report.outcome = "passed"
                    report.longrepr = None
                return report


            @pytest.fixture
            def working():
                return 1


            @pytest.fixture
            def broken(working):
                with open("set_up.txt", "a") as out:
                    out.write("broken\\n")
                raise RuntimeError("fixture fails")
            """,
            "test_setup.py": """
            def test_uses(working, broken):
                pass


            def test_other():
                pass
            """,
        },
    )
    set_up = tmp_path / "set_up.txt"
    pytest_run = run_pytest("-p", "no:randomly", "-rf", cwd=tmp_path)
    assert "FAILED test_setup.py::test_uses - KeyError: 'broken'" in pytest_run.stdout, pytest_run.output
    assert set_up.read_text() == "broken\n"
    set_up.unlink()
    rt_run = run_cli("test", "-p", "no:randomly", cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == counts_from_pytest(pytest_run.stdout), rt_run.output
    assert "KeyError: 'broken'" in rt_run.output, rt_run.output
    assert "RuntimeError" not in rt_run.output.split("----- Captured")[0]
    assert set_up.read_text() == "broken\n"


def test_the_junit_message_of_a_report_a_hook_made_failed_is_its_crash_line(tmp_path: Path) -> None:
    """pytest's JUnit ``<failure message=...>`` of a failed report is its crash line
    (``longrepr.reprcrash.message``): for an expected failure a hook turns into a failure, the exception's
    ``ValueError: expected``. rt wrote the report's whole text, or the xfail's reason alone (its xfail
    report kept the reason where pytest's keeps the exception's repr). pytest 9.2: the same messages."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            @pytest.hookimpl(wrapper=True)
            def pytest_runtest_makereport(item, call):
                report = yield
                if report.when == "call" and hasattr(report, "wasxfail"):
                    report.outcome = "failed"
                    del report.wasxfail
                return report
            """,
            "test_changed.py": """
            import pytest


            @pytest.mark.xfail(reason="known")
            def test_marked():
                raise ValueError("expected")


            def test_imperative():
                pytest.xfail("not yet")


            @pytest.mark.xfail
            def test_assert():
                value = 1
                assert value == 2
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly", "--junitxml", "pytest.xml")
    assert "3 failed" in pytest_run.stdout, pytest_run.output
    run_cli("test", "-p", "no:randomly", "--junitxml", "rt.xml", cwd=tmp_path)

    def messages(name: str) -> dict[str, str | None]:
        root = ET.parse(tmp_path / name).getroot()
        return {str(case.get("name")): case.find("failure").get("message") for case in root.iter("testcase")}  # type: ignore[union-attr]

    expected = messages("pytest.xml")
    assert expected["test_marked"] == "ValueError: expected", expected
    assert messages("rt.xml") == expected


def test_the_junit_message_of_a_fixtures_pytest_fail_keeps_every_line(tmp_path: Path) -> None:
    """The crash line is the message only of a failure whose details do not begin with it (a report's text):
    a fixture's ``pytest.fail`` of two lines keeps both in the JUnit ``message``, as pytest's
    ``failed on setup with "Failed: first line\\nsecond line"`` (a rule on the failure's kind alone cut it to
    its first line)."""
    write_files(
        tmp_path,
        {
            "test_fails.py": """
            import pytest


            @pytest.fixture
            def broken():
                pytest.fail("first line\\nsecond line")


            def test_uses(broken):
                pass
            """,
        },
    )
    pytest_run = run_pytest("-p", "no:randomly", "--junitxml", "pytest.xml", cwd=tmp_path)
    error = ET.parse(tmp_path / "pytest.xml").getroot().find(".//error")
    assert error is not None and "first line\nsecond line" in str(error.get("message")), pytest_run.output
    rt_run = run_cli("test", "-p", "no:randomly", "--junitxml", "rt.xml", cwd=tmp_path)
    error = ET.parse(tmp_path / "rt.xml").getroot().find(".//error")
    assert error is not None and "first line\nsecond line" in str(error.get("message")), rt_run.output


def test_a_failed_teardown_after_an_imperative_xfail_is_rerun_as_pytest_rerunfailures_reruns_it(
    tmp_path: Path,
) -> None:
    """The teardown report of a test that called ``pytest.xfail()`` with no xfail mark has no ``wasxfail``:
    pytest-rerunfailures 16.7 reruns the test for it as for any failed teardown, while a marked test's failed
    teardown is an expected failure it leaves alone. rt reran only after a passed or skipped call: 4 xfailed,
    1 xpassed, 1 error where pytest 9.2 counts 5 xfailed, 1 xpassed, 1 error, 1 rerun."""
    write_files(
        tmp_path,
        {
            "test_xfail_teardowns.py": """
            import pytest


            @pytest.fixture
            def teardown_fails():
                yield
                raise RuntimeError("teardown boom")


            @pytest.mark.xfail(reason="marked")
            def test_marked_and_failing(teardown_fails):
                assert 0


            @pytest.mark.xfail(reason="marked")
            def test_marked_and_passing(teardown_fails):
                pass


            def test_imperative_xfail(teardown_fails):
                pytest.xfail("imperative")
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(
        tmp_path, "-p", "no:randomly", "-p", "rerunfailures", "--reruns", "1"
    )
    assert "5 xfailed, 1 xpassed, 1 error, 1 rerun" in pytest_run.stdout, pytest_run.output


#: the conftest.py of the rerun tests' projects: ``first_run(name)`` tells the first of a test's attempts (its
#: count lives in the process, across reruns), ``teardown_fails`` fails every teardown
RERUN_CONFTEST = """
import pytest

RUNS = {}


@pytest.fixture
def first_run():
    def first(name):
        RUNS[name] = RUNS.get(name, 0) + 1
        return RUNS[name] == 1

    return first


@pytest.fixture
def teardown_fails():
    yield
    raise RuntimeError("teardown boom")
"""


def test_a_failed_call_or_set_up_and_a_failed_teardown_are_two_reruns_as_pytest_rerunfailures_counts(
    tmp_path: Path,
) -> None:
    """pytest-rerunfailures 16.7 logs each failed report of an attempt it reruns as a rerun: a failed call (or
    set-up) followed by a failed teardown counts twice. rt counted one rerun per attempt: 2 rerun where pytest
    9.2 counts 4 (one process and ``--parallel 2``)."""
    write_files(
        tmp_path,
        {
            "conftest.py": RERUN_CONFTEST,
            "test_two_failed_phases.py": """
            import pytest


            @pytest.fixture
            def set_up_fails_once(teardown_fails, first_run):
                if first_run("set-up"):
                    raise OSError("set-up fails once")


            @pytest.mark.flaky(reruns=1)
            def test_call_fails_once(teardown_fails, first_run):
                assert not first_run("call")


            @pytest.mark.flaky(reruns=1)
            def test_set_up_fails_once(set_up_fails_once):
                pass
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly", "-p", "rerunfailures")
    assert "2 passed, 2 errors, 4 rerun" in pytest_run.stdout, pytest_run.output
    parallel = run_cli("test", "-p", "no:randomly", "--parallel", "2", cwd=tmp_path)
    assert summary_counts(parallel.stderr) == counts_from_pytest(pytest_run.stdout), parallel.output


def test_only_rerun_and_rerun_except_choose_the_errors_pytest_rerunfailures_reruns(tmp_path: Path) -> None:
    """pytest-rerunfailures 16.7 reruns a failed attempt only when each failed phase's error (``Type: text``,
    or one it was raised from) matches an ``--only-rerun`` pattern and none a ``--rerun-except`` one, the
    ``flaky`` mark's ``only_rerun`` first. rt reran every failure (a teardown's too): 2 passed, 2 skipped,
    2 errors, 2 rerun where pytest 9.2 counts 1 passed, 1 skipped, 2 errors for the teardowns."""
    write_files(
        tmp_path,
        {
            "conftest.py": RERUN_CONFTEST,
            "test_filtered_reruns.py": """
            import pytest


            def test_teardown_fails(teardown_fails):
                pass


            def test_skips_then_teardown_fails(teardown_fails):
                pytest.skip("skipped in the call")


            def test_value_error_once(first_run):
                if first_run("value"):
                    raise ValueError("first value")


            def test_key_error_from_a_value_error_once(first_run):
                if first_run("key"):
                    try:
                        raise ValueError("inner")
                    except ValueError as exc:
                        raise KeyError("outer") from exc


            @pytest.mark.flaky(reruns=1, only_rerun=["KeyError"])
            def test_marked_for_key_errors_only(first_run):
                if first_run("marked"):
                    raise ValueError("not the kind the mark wants")
            """,
        },
    )
    plugins = ("-p", "no:randomly", "-p", "rerunfailures", "--reruns", "1")
    pytest_run, _ = same_counts_as_pytest(tmp_path, *plugins, "--only-rerun", "ValueError")
    assert "1 failed, 3 passed, 1 skipped, 2 errors, 2 rerun" in pytest_run.stdout, pytest_run.output
    excepted = ("--rerun-except", "RuntimeError", "--rerun-except", "Key.*outer")
    pytest_run, _ = same_counts_as_pytest(tmp_path, *plugins, *excepted)
    assert "2 failed, 2 passed, 1 skipped, 2 errors, 1 rerun" in pytest_run.stdout, pytest_run.output


def test_only_rerun_matches_a_teardown_error_without_the_calls_error(tmp_path: Path) -> None:
    """pytest tears a test down after its call's report, so the error of a failed teardown has no context
    from the call's error and ``--only-rerun AssertionError`` refuses to rerun the attempt for a teardown's
    ValueError. rt tore down while the call's AssertionError propagated, Python chained it to the teardown's
    error, and the filter found it there: 2 failed, 2 errors, 8 rerun where pytest 9.2 counts 2 failed, 2 errors
    (a fixture's teardown and a unittest tearDown)."""
    write_files(
        tmp_path,
        {
            "test_teardown_after_failed_call.py": """
            import unittest

            import pytest


            @pytest.fixture
            def teardown_fails():
                yield
                raise ValueError("teardown")


            def test_call_and_teardown_fail(teardown_fails):
                assert 0, "call"


            class TestCase(unittest.TestCase):
                def tearDown(self):
                    raise ValueError("tearDown")

                def test_fails(self):
                    self.assertEqual(1, 2)
            """,
        },
    )
    plugins = ("-p", "no:randomly", "-p", "rerunfailures", "--reruns", "2")
    pytest_run, _ = same_counts_as_pytest(tmp_path, *plugins, "--only-rerun", "AssertionError")
    assert "2 failed, 2 errors in" in pytest_run.stdout, pytest_run.output


def test_rerun_filters_do_not_apply_to_a_test_failed_only_by_its_subtests(tmp_path: Path) -> None:
    """A test whose body passed and whose subtest failed has a passed call report when pytest-rerunfailures
    checks it (pytest 9.2 marks it failed later, when it counts it): the plugin reruns it for its failed
    subtests whatever ``--only-rerun``/``--rerun-except`` say. rt matched its own "contains 1 failed
    subtest" error against them: 1 rerun where pytest counts 2 with ``--only-rerun AssertionError``, none
    where it counts 1 with ``--only-rerun ValueError``."""
    write_files(
        tmp_path,
        {
            "test_failed_subtests.py": """
            def test_only_a_subtest_fails(subtests):
                with subtests.test("a"):
                    assert 0, "subtest"


            def test_a_subtest_and_the_body_fail(subtests):
                with subtests.test("a"):
                    raise ValueError("subtest")
                assert 0
            """,
        },
    )
    plugins = ("-p", "no:randomly", "-p", "rerunfailures", "--reruns", "1")
    pytest_run, _ = same_counts_as_pytest(tmp_path, *plugins, "--only-rerun", "AssertionError")
    assert "4 failed, 2 rerun in" in pytest_run.stdout, pytest_run.output
    pytest_run, _ = same_counts_as_pytest(tmp_path, *plugins, "--only-rerun", "ValueError")
    assert "4 failed, 1 rerun in" in pytest_run.stdout, pytest_run.output
    pytest_run, _ = same_counts_as_pytest(tmp_path, *plugins, "--rerun-except", "AssertionError")
    assert "4 failed, 1 rerun in" in pytest_run.stdout, pytest_run.output


def _properties(path: Path) -> dict[str, list[tuple[str | None, str | None]]]:
    """Each ``<testcase>``'s ``<property>`` (name, value) pairs of a JUnit file, by the test's name."""
    return {
        str(case.get("name")): [(p.get("name"), p.get("value")) for p in case.iter("property")]
        for case in ET.parse(path).getroot().iter("testcase")
    }


def test_the_properties_a_hook_adds_to_the_teardown_report_are_in_the_junit_file(tmp_path: Path) -> None:
    """pytest's JUnit file writes the ``user_properties`` of each test's teardown report, which a
    ``pytest_runtest_makereport`` wrapper may add to (a plugin tagging its tests for a test-management
    tool): rt wrote the node's, ``record_property``'s only. pytest 9.2: the hook's property after the
    test's own, in each test's ``<properties>``."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(item, call):
                outcome = yield
                report = outcome.get_result()
                if report.when == "teardown":
                    report.user_properties.append(("checked_by", "hook"))
            """,
            "test_properties.py": """
            def test_recorded(record_property):
                record_property("mine", 1)


            def test_plain():
                pass
            """,
        },
    )
    run_pytest("-p", "no:randomly", "--junitxml=pytest.xml", cwd=tmp_path)
    rt_run = run_cli("test", "--junitxml=rt.xml", cwd=tmp_path)
    expected = _properties(tmp_path / "pytest.xml")
    assert expected["test_recorded"] == [("mine", "1"), ("checked_by", "hook")]
    assert _properties(tmp_path / "rt.xml") == expected, rt_run.output


LOGGING_SKIPPING_CONFTEST = """
import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    with open("reports." + os.environ["WHO"], "a") as log:
        log.write(f"{item.name}:{report.when}:{report.outcome}\\n")
    if report.when == "call" and report.failed:
        report.outcome = "skipped"  # a conftest.py skipping a test that failed for want of a service
        report.longrepr = (str(item.path), 1, "Skipped: service down")
"""


def test_pytest_exit_stops_the_run_under_a_wrapper_that_skips_failed_reports(tmp_path: Path) -> None:
    """``pytest.exit()`` in a test whose conftest.py makes failed call reports skipped: pytest makes no
    report of the exited phase (nor of the teardown after it) and stops with ``!!! Exit`` and the exit's
    code; rt handed the exit to the hook as a failed report, took the skip back and ran on (1 passed,
    1 skipped, status 0)."""
    write_files(
        tmp_path,
        {
            "conftest.py": LOGGING_SKIPPING_CONFTEST,
            "test_exit.py": """
            import pytest


            def test_a():
                pytest.exit("stop here", returncode=3)


            def test_b():
                pass
            """,
        },
    )
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path, env={"WHO": "pytest"})
    rt_run = run_cli("test", cwd=tmp_path, env={"WHO": "rt"})
    assert "Exit: stop here" in pytest_run.stdout, pytest_run.output
    assert "Exit: stop here" in rt_run.output, rt_run.output
    assert (pytest_run.code, rt_run.code) == (3, 3), rt_run.output
    assert "test_b" not in rt_run.output, rt_run.output
    expected = (tmp_path / "reports.pytest").read_text()
    assert expected == "test_a:setup:passed\n"
    assert (tmp_path / "reports.rt").read_text() == expected


XFAIL_PHASES_CONFTEST = """
import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "forgive: its failed teardown report is made passed")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    with open("reports." + os.environ["WHO"], "a") as log:
        log.write(f"{item.name}:{report.when}:{report.outcome}:{getattr(report, 'wasxfail', '-')}\\n")
    if report.when == "teardown" and report.failed and item.get_closest_marker("forgive"):
        report.outcome = "passed"
        report.longrepr = None
"""

XFAIL_PHASES_TESTS = """
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("no db")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown boom")


@pytest.mark.xfail(reason="db")
def test_fixture_raises(broken):
    pass


@pytest.mark.xfail(reason="db", strict=True)
def test_fixture_raises_strict(broken):
    pass


@pytest.mark.xfail(reason="db", raises=ValueError)
def test_fixture_raises_another_class(broken):
    pass


@pytest.mark.forgive
@pytest.mark.xfail(reason="known")
def test_teardown_raises_forgiven(broken_teardown):
    assert 0


@pytest.mark.xfail(reason="known")
def test_teardown_raises(broken_teardown):
    assert 0


@pytest.mark.xfail(reason="known", raises=ValueError)
def test_call_raises_another_class():
    raise TypeError("not this one")


@pytest.mark.xfail(reason="known", strict=True)
def test_strict_passes():
    pass
"""


@pytest.mark.parametrize(
    "conftest",
    [XFAIL_PHASES_CONFTEST, XFAIL_PHASES_CONFTEST + PLAIN_PROTOCOL, None],
    ids=["makereport_hook", "plain_protocol", "no_hook"],
)
def test_every_phase_of_an_xfail_test_is_reported_as_pytests_skipping_plugin_makes_it(
    tmp_path: Path, conftest: str | None
) -> None:
    """An xfail mark applies to the report of every phase, as pytest's skipping plugin makes it: a set-up or
    teardown error is skipped with ``wasxfail`` (failed when ``raises`` does not allow its class), whatever
    ``strict`` says. rt applied the mark to the call's report alone (a fixture's error under the mark was a
    failed set-up report without ``wasxfail``), and a hook changing a teardown report wiped the call's xfail
    (a wrapper making failed teardown reports passed turned an xfailed ``assert 0`` into a failure, since
    under rt the teardown report it saw was failed). The reports the hook sees, the counts, the JUnit totals
    and the exit status are pytest's, with the hook (under rt's protocol and a plugin's plain one) and
    without."""
    files = {"test_xfail_phases.py": XFAIL_PHASES_TESTS}
    if conftest is not None:
        files["conftest.py"] = conftest
    write_files(tmp_path, files)
    pytest_run = run_pytest("-p", "no:randomly", "--junitxml=pytest.xml", cwd=tmp_path, env={"WHO": "pytest"})
    rt_run = run_cli("test", "--junitxml=rt.xml", cwd=tmp_path, env={"WHO": "rt"})
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected == {"fail": 2, "error": 1, "xfail": 6}, pytest_run.output
    assert summary_counts(rt_run.stderr) == expected, rt_run.output
    assert _junit(tmp_path / "rt.xml")[0] == _junit(tmp_path / "pytest.xml")[0], rt_run.output
    assert (pytest_run.code, rt_run.code) == (1, 1), rt_run.output
    if conftest is not None:
        reported = (tmp_path / "reports.pytest").read_text()
        assert "test_fixture_raises:setup:skipped:db" in reported, reported
        assert "test_teardown_raises_forgiven:teardown:skipped:known" in reported, reported
        assert sorted((tmp_path / "reports.rt").read_text().splitlines()) == sorted(reported.splitlines())
