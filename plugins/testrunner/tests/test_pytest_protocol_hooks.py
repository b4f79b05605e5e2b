"""``rt test`` on the pytest hooks around each test's protocol and the reporter's state that plugins and
conftest.py files use (issue 15, session 13): each test writes a small project, runs pytest 9.2 and ``rt test``
on it and compares what both give (outcome counts, the files hooks write)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: a conftest.py that takes over each test's protocol, as retry code in real suites' conftest.py files does:
#: pytest's ``runtestprotocol`` run up to 3 times without logging, the last run's reports logged
_RETRYING_CONFTEST = """
from _pytest.runner import runtestprotocol


def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(3):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        if not any(report.failed for report in reports):
            break
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_runtest_logreport(report):
    with open("logged.txt", "a") as out:
        out.write(f"{report.nodeid} {report.when} {report.outcome}\\n")
"""

#: the same through pytest's runner plugin, as flaky's: its protocol run again with its ``call_and_report``
#: patched to keep each run's reports and log none
_RUNNER_PLUGIN_CONFTEST = """
RUNNER = []


def pytest_configure(config):
    RUNNER.append(config.pluginmanager.getplugin("runner"))


def pytest_runtest_protocol(item, nextitem):
    runner = RUNNER[0]
    original = runner.call_and_report
    kept = []

    def call_and_report(item, when, log=True, **kwds):
        report = original(item, when, log=False, **kwds)
        kept.append(report)
        return report

    runner.call_and_report = call_and_report
    try:
        for attempt in range(3):
            kept.clear()
            runner.pytest_runtest_protocol(item, nextitem)
            if not any(report.failed for report in kept):
                break
    finally:
        runner.call_and_report = original
    for report in kept:
        item.ihook.pytest_runtest_logreport(report=report)
    return True


def pytest_runtest_logreport(report):
    with open("logged.txt", "a") as out:
        out.write(f"{report.nodeid} {report.when} {report.outcome}\\n")
"""

_RETRIED_TESTS = """
import pytest

RUNS = {"flaky": 0, "set_up": 0}


@pytest.fixture
def counted():
    RUNS["set_up"] += 1
    yield RUNS["set_up"]


def test_flaky_passes_at_its_second_run(counted):
    RUNS["flaky"] += 1
    assert RUNS["flaky"] >= 2


def test_fixtures_are_set_up_again_for_each_run(counted):
    assert counted == RUNS["set_up"]


def test_fails_each_time():
    assert 0


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert 0


@pytest.mark.xfail(strict=True)
def test_strict_xpass():
    pass


@pytest.fixture
def broken():
    raise RuntimeError("set-up")


def test_setup_error(broken):
    pass


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")


def test_teardown_error(broken_teardown):
    pass


def test_imperative_skip():
    pytest.skip("skipped inside")
"""


@pytest.mark.parametrize(
    "conftest", [_RETRYING_CONFTEST, _RUNNER_PLUGIN_CONFTEST], ids=["runtestprotocol", "runner"]
)
def test_a_plain_protocol_hook_runs_the_test_through_rts_phases(tmp_path: Path, conftest: str) -> None:
    """A conftest.py's plain ``pytest_runtest_protocol`` that runs each test itself through pytest's
    ``runtestprotocol`` (retry code): rt called only the hook's wrappers and ran each test once, so the flaky
    test failed (pytest: it passes at its second run). Now the hook runs, ``item.ihook``'s set-up, call and
    teardown hooks run rt's phases of the test, and the test's outcome is what the hook logged. pytest 9.2:
    2 failed, 3 passed, 2 skipped, 1 xfailed, 2 errors (the teardown error's test passed too); the same
    reports reach the conftest.py's ``pytest_runtest_logreport``. The same through pytest's runner plugin
    (``pluginmanager.getplugin("runner")``, None in rt before), as flaky 3.8.1 reruns its tests."""
    files = {"conftest.py": conftest, "test_retried.py": _RETRIED_TESTS}
    root = write_files(tmp_path, files)
    pytest_run = run_pytest(cwd=root)
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected == {"fail": 2, "pass": 3, "skip": 2, "xfail": 1, "error": 2}, pytest_run.output
    logged = sorted((root / "logged.txt").read_text().splitlines())
    (root / "logged.txt").unlink()
    assert "test_retried.py::test_flaky_passes_at_its_second_run call passed" in logged, pytest_run.output
    rt_run = run_cli("test", cwd=root)
    found = summary_counts(rt_run.stderr)
    assert found == expected, rt_run.output
    assert sorted((root / "logged.txt").read_text().splitlines()) == logged, rt_run.output
    assert "pytest_runtest_protocol" not in rt_run.output, rt_run.output


def test_a_plain_protocol_hook_that_answers_none_leaves_the_test_to_rt(tmp_path: Path) -> None:
    """A plain hook that answers None for a test (flaky's, for a test without its mark) leaves the test to the
    next implementation, rt's own; the ``pytest_runtest_protocol`` wrappers wrap both."""
    files = {
        "conftest.py": """
        from _pytest.runner import runtestprotocol


        def pytest_runtest_protocol(item, nextitem):
            if item.get_closest_marker("twice") is None:
                return None
            runtestprotocol(item, nextitem=nextitem, log=False)
            runtestprotocol(item, nextitem=nextitem)
            return True


        pytest_plugins = ["wrapping"]
        """,
        "wrapping.py": """
        import pytest


        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_protocol(item, nextitem):
            with open("wrapped.txt", "a") as out:
                out.write(item.name + "\\n")
            return (yield)
        """,
        "pytest.ini": """
        [pytest]
        markers = twice
        """,
        "test_marked.py": """
        import pytest

        RUNS = []


        @pytest.mark.twice
        def test_runs_twice():
            RUNS.append(1)
            assert len(RUNS) == 1


        def test_runs_once():
            RUNS.append(2)
        """,
    }
    root = write_files(tmp_path, files)
    pytest_run = run_pytest(cwd=root)
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected == {"fail": 1, "pass": 1}, pytest_run.output
    wrapped = (root / "wrapped.txt").read_text()
    (root / "wrapped.txt").unlink()
    rt_run = run_cli("test", cwd=root)
    assert summary_counts(rt_run.stderr) == expected, rt_run.output
    assert (root / "wrapped.txt").read_text() == wrapped, rt_run.output


def test_a_plain_protocol_hook_runs_async_tests_too(tmp_path: Path) -> None:
    """A plain hook is synchronous: it drives an async test's phases too, whose async steps run each to its
    end in a main-thread loop, as pytest's async plugins run them (anyio's here). Each test runs twice, the
    second run logged: both fail at their second run, as under pytest (2 failed)."""
    files = {
        "conftest.py": """
        from _pytest.runner import runtestprotocol


        def pytest_runtest_protocol(item, nextitem):
            runtestprotocol(item, nextitem=nextitem, log=False)
            runtestprotocol(item, nextitem=nextitem)
            return True
        """,
        "test_async.py": """
        import pytest

        RUNS = []


        def test_sync_runs_twice():
            RUNS.append(1)
            assert RUNS.count(1) == 1


        @pytest.fixture
        async def resource():
            yield 2


        @pytest.mark.anyio
        async def test_async_runs_twice(resource):
            RUNS.append(resource)
            assert RUNS.count(2) == 1


        @pytest.fixture
        def anyio_backend():
            return "asyncio"
        """,
    }
    root = write_files(tmp_path, files)
    pytest_run = run_pytest(cwd=root)
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected == {"fail": 2}, pytest_run.output
    found, output = _rt_test(root, {})
    assert found == expected, output
    assert "pytest_runtest_protocol" not in output, output


def _rt_test(root: Path, files: dict[str, str], *args: str) -> tuple[dict[str, int], str]:
    """Write ``files`` under ``root``, run ``rt test`` there: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=write_files(root, files))
    return summary_counts(result.stderr), result.output


#: a conftest.py that reads ``terminalreporter.stats`` at the end, as pytest-md-report and summary plugins do
_STATS_CONFTEST = """
CATEGORIES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = terminalreporter.stats
    with open("summary.txt", "w") as out:
        for category in CATEGORIES:
            out.write(f"{category}: {sorted(report.nodeid for report in stats.get(category, []))}\\n")
        out.write(f"exitstatus {exitstatus}\\n")
    terminalreporter.write_line(f"summary of {sum(len(stats.get(c, [])) for c in CATEGORIES)} reports")


def pytest_unconfigure(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    failed = [(report.nodeid, report.when) for report in reporter.stats.get("failed", [])]
    errors = [(report.nodeid, report.when) for report in reporter.stats.get("error", [])]
    with open("unconfigure.txt", "w") as out:
        out.write(f"{failed} {errors}\\n")
"""

_OUTCOMES = """
import pytest


def test_passes():
    pass


def test_fails():
    assert 0


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert 0


@pytest.mark.xfail(reason="known")
def test_xpasses():
    pass


@pytest.fixture
def broken():
    raise RuntimeError("set-up")


def test_setup_error(broken):
    pass


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")


def test_teardown_error(broken_teardown):
    pass
"""


def test_terminal_reporter_stats_hold_the_runs_reports_by_outcome(tmp_path: Path) -> None:
    """``terminalreporter.stats`` was empty in rt, so a plugin's summary built from it (pytest-md-report's
    table of outcomes per test) showed nothing. It now holds a report for each result under pytest's
    category, for the conftest.py's ``pytest_terminal_summary`` and ``pytest_unconfigure`` alike; the
    files they write are pytest's."""
    root = write_files(tmp_path, {"conftest.py": _STATS_CONFTEST, "test_outcomes.py": _OUTCOMES})
    pytest_run = run_pytest(cwd=root)
    assert "summary of 8 reports" in pytest_run.stdout, pytest_run.output
    written = {name: (root / name).read_text() for name in ("summary.txt", "unconfigure.txt")}
    assert "('test_outcomes.py::test_teardown_error', 'teardown')" in written["unconfigure.txt"]
    for name in written:
        (root / name).unlink()
    rt_run = run_cli("test", cwd=root)
    assert "summary of 8 reports" in rt_run.stdout, rt_run.output
    assert {name: (root / name).read_text() for name in written} == written, rt_run.output


def test_terminal_reporter_stats_have_pytests_keys_phases_and_order(tmp_path: Path) -> None:
    """pytest files every phase's report: a set-up or teardown that passed under ``""``, a ``pytest.skip()``
    in the test (or a skip mark, a fixture that skips) under ``skipped`` for its ``call`` (``setup``), the
    deselected tests under ``deselected`` and the warnings as ``WarningReport`` under ``warnings``, each key
    where pytest adds it first. rt had no ``""``, ``deselected`` nor ``warnings`` key, and filed every skip
    under ``setup``: a conftest summary counting ``stats.get("deselected")`` or ``stats["warnings"]`` (or all
    the reports) said otherwise than under pytest (issue 15, session 14)."""
    conftest = """
    def pytest_terminal_summary(terminalreporter):
        with open("stats.txt", "w") as out:
            for key, reports in terminalreporter.stats.items():
                shown = [
                    (report.nodeid, getattr(report, "when", None), getattr(report, "outcome", None))
                    for report in reports
                ]
                out.write(f"{key!r}: {shown}\\n")
            for report in terminalreporter.stats.get("warnings", []):
                out.write(f"{type(report).__name__} {report.message.splitlines()[0].split(': ', 1)[1]}\\n")
    """
    more = """
    import warnings


    def test_skips_in_its_body():
        pytest.skip("later")


    @pytest.fixture
    def skipper():
        pytest.skip("in a fixture")


    def test_skipped_by_a_fixture(skipper):
        pass


    @pytest.mark.xfail(run=False, reason="not run")
    def test_xfail_not_run():
        pass


    def test_warns():
        warnings.warn("careful", UserWarning)


    def test_left_out():
        pass
    """
    root = write_files(
        tmp_path, {"conftest.py": conftest, "test_outcomes.py": _OUTCOMES + textwrap.dedent(more)}
    )
    args = ("--deselect", "test_outcomes.py::test_left_out")
    pytest_run = run_pytest("-p", "no:randomly", *args, cwd=root)
    expected = (root / "stats.txt").read_text()
    assert "'': [('test_outcomes.py::test_passes', 'setup', 'passed')" in expected, pytest_run.output
    assert "('test_outcomes.py::test_skips_in_its_body', 'call', 'skipped')" in expected
    assert "WarningReport UserWarning: careful" in expected
    (root / "stats.txt").unlink()
    rt_run = run_cli("test", *args, cwd=root)
    assert (root / "stats.txt").read_text() == expected, rt_run.output


def test_report_header_post_finalizer_and_nextitem_hooks(tmp_path: Path) -> None:
    """Hooks rt did not call: ``pytest_report_header`` and ``pytest_report_collectionfinish`` (their lines
    are printed before the first test, as pytest prints them in its header and after its ``collected``
    line), ``pytest_fixture_post_finalizer`` (after each fixture's teardown, a directly parametrized name's
    too), and ``nextitem`` of ``pytest_runtest_teardown``, which was always None (pytest: the next test, the
    next file's first after a file's last, None for the last). The file the hooks write is pytest's."""
    files = {
        "conftest.py": """
        import pytest


        def pytest_report_header(config, start_path):
            return ["project: demo", f"started in: {start_path.name}"]


        def pytest_report_collectionfinish(config, start_path, items):
            return f"selected {len(items)} tests"


        def pytest_fixture_post_finalizer(fixturedef, request):
            if fixturedef.argname in ("own", "shared", "x"):
                with open("hooks.txt", "a") as out:
                    out.write(f"post {fixturedef.argname} {fixturedef.scope}\\n")


        def pytest_runtest_teardown(item, nextitem):
            with open("hooks.txt", "a") as out:
                out.write(f"teardown {item.name} next {nextitem.name if nextitem is not None else None}\\n")


        @pytest.fixture(scope="module")
        def shared():
            yield 1


        @pytest.fixture
        def own(shared):
            return shared + 1
        """,
        "test_one.py": """
        import pytest


        def test_a(own):
            pass


        class TestB:
            def test_b(self, shared):
                pass

            @pytest.mark.parametrize("x", [1, 2])
            def test_c(self, x, own):
                pass
        """,
        "test_two.py": """
        def test_d():
            pass
        """,
    }
    root = write_files(tmp_path, files)
    pytest_run = run_pytest(cwd=root)
    assert "project: demo" in pytest_run.stdout and "selected 5 tests" in pytest_run.stdout, pytest_run.output
    written = (root / "hooks.txt").read_text()
    assert "teardown test_c[2] next test_d\npost own function\npost x function\n" in written, written
    (root / "hooks.txt").unlink()
    rt_run = run_cli("test", cwd=root)
    assert f"project: demo\nstarted in: {root.name}\nselected 5 tests\n" in rt_run.stdout, rt_run.output
    assert (root / "hooks.txt").read_text() == written, rt_run.output


def test_each_report_hooks_lines_come_where_its_hooks_return(tmp_path: Path) -> None:
    """pytest writes the ``pytest_report_header`` lines when those hooks return, before it calls the
    ``pytest_report_collectionfinish`` hooks: what a collection-finish hook prints comes after the header's
    lines. rt wrote both hooks' lines together, after everything both printed. pytest 9.2: the same order."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_report_header(config):
                print("printed by the header hook")
                return ["header line one", "header line two"]


            def pytest_report_collectionfinish(config, start_path, items):
                print("printed by the collection-finish hook")
                return "collection-finish line"
            """,
            "test_a.py": "def test_a():\n    pass\n",
        },
    )
    wanted = (
        "printed by the header hook",
        "header line one",
        "header line two",
        "printed by the collection-finish hook",
        "collection-finish line",
    )

    def order(output: str) -> list[str]:
        return [line for line in output.splitlines() if line in wanted]

    pytest_run = run_pytest("-p", "no:randomly", "-p", "no:benchmark", cwd=tmp_path)
    assert order(pytest_run.stdout) == list(wanted), pytest_run.output
    rt_run = run_cli("test", "-p", "no:randomly", cwd=tmp_path)
    assert order(rt_run.stdout) == list(wanted), rt_run.output
