"""``rt test``'s command line and summary for a pytest user (issue 15): pytest's own flags, ``pytest.exit``'s
reason, pytest's exception classes raised by rt.

Each test writes a small project and runs ``rt test`` on it, and pytest too where its behaviour is the one to
match.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def test_pytest_exit_names_its_reason_and_reports_no_result_for_its_test(tmp_path: Path) -> None:
    """pytest prints ``!!! _pytest.outcomes.Exit: msg !!!`` and counts no result for the test that called
    ``pytest.exit()`` (it neither passed nor failed): rt says the same, not "KeyboardInterrupt in a test"."""
    write_files(
        tmp_path,
        {
            "test_stop.py": """
            import pytest

            def test_first():
                pass

            def test_exit():
                pytest.exit("the database is gone")

            def test_never_runs():
                pass
            """
        },
    )
    expected = run_pytest(cwd=tmp_path)
    assert "_pytest.outcomes.Exit: the database is gone" in expected.stdout
    found = run_cli("test", cwd=tmp_path)
    assert summary_counts(found.stderr) == counts_from_pytest(expected.stdout) == {"pass": 1}, found.output
    assert "!!! _pytest.outcomes.Exit: the database is gone !!!" in found.stderr
    assert "KeyboardInterrupt" not in found.stderr
    assert "test_never_runs" not in found.stderr
    assert found.code == expected.code == 2


def test_pytest_exit_s_reason_crosses_from_a_parallel_worker(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "test_stop.py": "import pytest\n\ndef test_exit():\n    pytest.exit('stop now', returncode=3)\n",
            "test_other.py": "def test_other():\n    pass\n",
        },
    )
    found = run_cli("test", "--parallel=2", cwd=tmp_path)
    assert "!!! _pytest.outcomes.Exit: stop now !!!" in found.stderr, found.output
    assert found.code == 3


def test_a_missing_fixture_raises_pytest_s_own_lookup_error(tmp_path: Path) -> None:
    """A suite asserting that ``request.getfixturevalue`` raises ``pytest.FixtureLookupError`` (pytest's
    class, which it names) passes, and the error still carries pytest's ``argname``."""
    write_files(
        tmp_path,
        {
            "test_lookup.py": """
            import pytest

            def test_missing(request):
                with pytest.raises(pytest.FixtureLookupError) as info:
                    request.getfixturevalue("no_such_fixture")
                assert info.value.argname == "no_such_fixture"
                assert "no_such_fixture" in str(info.value)

            def test_still_a_lookup_error(request):
                with pytest.raises(LookupError):
                    request.getfixturevalue("no_such_fixture")

            def test_outcome_classes():
                from _pytest.outcomes import Failed, Skipped
                with pytest.raises(pytest.fail.Exception):
                    pytest.fail("x")
                with pytest.raises(Failed):
                    pytest.fail("y")
                with pytest.raises(pytest.skip.Exception):
                    pytest.skip("z")
                assert pytest.skip.Exception is Skipped
            """
        },
    )
    expected = run_pytest(cwd=tmp_path)
    found = run_cli("test", cwd=tmp_path)
    assert summary_counts(found.stderr) == counts_from_pytest(expected.stdout) == {"pass": 3}, found.output


@pytest.mark.parametrize("scope", ["lookup", "use"])
def test_an_unknown_fixture_is_still_a_set_up_error(tmp_path: Path, scope: str) -> None:
    """The joined class changes nothing for a test that asks for a fixture nobody defines: pytest's error."""
    body = (
        "def test_a(nope):\n    pass\n"
        if scope == "use"
        else "def test_a(request):\n    request.getfixturevalue('nope')\n"
    )
    write_files(tmp_path, {"test_a.py": "import pytest\n\n" + body})
    expected = run_pytest(cwd=tmp_path)
    found = run_cli("test", cwd=tmp_path)
    assert summary_counts(found.stderr) == counts_from_pytest(expected.stdout), found.output
    assert "fixture 'nope' not found" in found.stderr


#: a suite whose counts each option below changes, or must not change
SUITE = {
    "test_flags.py": """
    import pytest

    def test_ok():
        pass

    def test_fails():
        assert 1 == 2

    def test_fails_too():
        assert 0

    @pytest.mark.xfail(reason="known")
    def test_xfail():
        assert 0

    def test_imperative_xfail():
        pytest.xfail("not yet")

    @pytest.mark.parametrize("n", [1, 2])
    def test_param(n):
        pass
    """
}

#: pytest's display options: accepted, changing nothing rt counts
DISPLAY = [
    "-q",
    "-v",
    "-vv",
    "-rA",
    "-rfE",
    "--tb=short",
    "-l",
    "--color=no",
    "--durations=3",
    "--setup-show",
    "--no-header",
    "--disable-warnings",
    "-p",
    "no:cacheprovider",
    "--import-mode=importlib",
    "--showlocals",
    "--code-highlight=no",
]


@pytest.mark.parametrize("where", ["command line", "addopts"])
def test_pytest_s_display_options_are_accepted_and_change_no_count(tmp_path: Path, where: str) -> None:
    """A user who switches from pytest types ``rt test -q -rA --tb=short ...``: the run is the same as
    without them, with pytest's counts, whether they are typed or written in the project's ``addopts``."""
    files = dict(SUITE)
    args: list[str] = []
    if where == "addopts":
        files["pytest.ini"] = "[pytest]\naddopts = " + " ".join(DISPLAY) + "\n"
    else:
        args = DISPLAY
    write_files(tmp_path, files)
    expected = run_pytest(*args, cwd=tmp_path)
    found = run_cli("test", *args, cwd=tmp_path)
    assert summary_counts(found.stderr) == counts_from_pytest(expected.stdout), found.output
    assert summary_counts(found.stderr) == {"pass": 3, "fail": 2, "xfail": 2}
    assert "ignoring addopts" not in found.stderr
    assert found.code == expected.code == 1


@pytest.mark.parametrize(
    "args",
    [
        ["-x"],
        ["--exitfirst"],
        ["--maxfail=2"],
        ["--maxfail", "1"],
        ["--runxfail"],
        ["-xq"],
        ["--capture=no"],
        ["--strict-markers"],
    ],
    ids=lambda args: " ".join(args),
)
def test_pytest_s_options_with_an_rt_meaning_count_as_under_pytest(tmp_path: Path, args: list[str]) -> None:
    """``-x``/``--maxfail`` are rt's ``--bail``; ``--runxfail`` runs xfail tests (marks and ``pytest.xfail()``)
    as plain ones: the same counts as pytest's, from the command line and from ``addopts``."""
    write_files(tmp_path, SUITE)
    expected = counts_from_pytest(run_pytest(*args, cwd=tmp_path).stdout)
    assert summary_counts(run_cli("test", *args, cwd=tmp_path).stderr) == expected
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = " + " ".join(args) + "\n"})
    found = run_cli("test", cwd=tmp_path)
    assert summary_counts(found.stderr) == expected, found.output


@pytest.mark.parametrize(
    ("option", "reason"),
    [
        ("--lf", "rt keeps no cache of earlier runs"),
        ("--ff", "rt keeps no cache of earlier runs"),
        ("--sw", "rt keeps no cache of earlier runs"),
        ("--pdb", "no debugger integration"),
        ("--trace", "no debugger integration"),
        ("--setup-plan", "rt runs the tests it sets up"),
        ("--fixtures", "rt test lists no fixtures"),
        ("--cov=pkg", "pytest-cov: use rt test --coverage"),
    ],
)
def test_pytest_s_options_rt_does_not_have_are_refused_in_one_line(
    tmp_path: Path, option: str, reason: str
) -> None:
    write_files(tmp_path, SUITE)
    found = run_cli("test", option, cwd=tmp_path)
    assert found.code == 1, found.output
    assert found.stderr.strip().splitlines() == [
        f"error: {option} is not supported by rt test: {reason}"
    ] or (
        found.stderr.strip()
        .splitlines()[-1]
        .startswith(f"error: {option} is not supported by rt test: {reason}")
    ), found.output
    assert "Traceback" not in found.output
    assert "test_ok" not in found.output  # no test ran


def test_dash_p_loads_a_plugin_module_and_blocks_one_with_no(tmp_path: Path) -> None:
    """``-p NAME`` loads module NAME as a plugin (its fixtures and hooks), before the conftest.py files, as
    pytest does; the same in ``addopts``."""
    write_files(
        tmp_path,
        {
            "myplugin.py": """
            import pytest

            @pytest.fixture
            def from_plugin():
                return 42

            def pytest_collection_modifyitems(items):
                for item in items:
                    item.add_marker(pytest.mark.tagged)
            """,
            "test_p.py": """
            def test_uses(from_plugin):
                assert from_plugin == 42

            def test_plain():
                pass
            """,
        },
    )
    env = {"PYTHONPATH": str(tmp_path)}
    for args in (["-p", "myplugin"], ["-pmyplugin", "-m", "tagged"], ["-p", "myplugin", "-m", "not tagged"]):
        expected = counts_from_pytest(run_pytest(*args, cwd=tmp_path, env=env).stdout)
        found = run_cli("test", *args, cwd=tmp_path, env=env)
        assert summary_counts(found.stderr) == expected, (args, found.output)
    assert summary_counts(run_cli("test", "-p", "myplugin", cwd=tmp_path, env=env).stderr) == {"pass": 2}
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = -p myplugin\n"})
    found = run_cli("test", cwd=tmp_path, env=env)
    assert summary_counts(found.stderr) == {"pass": 2}, found.output


def test_junitxml_writes_rt_s_junit_report(tmp_path: Path) -> None:
    write_files(tmp_path, SUITE)
    found = run_cli("test", "--junitxml=reports/out.xml", cwd=tmp_path)
    import xml.etree.ElementTree as ET

    suites = ET.parse(tmp_path / "reports" / "out.xml").getroot()
    assert suites.get("tests") == "7", found.output
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = --junit-xml=from-addopts.xml\n"})
    run_cli("test", cwd=tmp_path)
    assert (tmp_path / "from-addopts.xml").is_file()


def test_dash_n_runs_in_worker_processes(tmp_path: Path) -> None:
    """pytest-xdist's ``-n N`` is rt's ``--parallel=N``: each test records its process id."""
    files = {
        f"test_{index}.py": f"import os\n\ndef test_{index}():\n    open('pid_{index}', 'w').write(str(os.getpid()))\n"
        for index in range(4)
    }
    write_files(tmp_path, files)
    found = run_cli("test", "-n", "2", cwd=tmp_path)
    assert summary_counts(found.stderr) == {"pass": 4}, found.output
    pids = {(tmp_path / f"pid_{index}").read_text() for index in range(4)}
    assert 1 <= len(pids) <= 2
    assert str(found.code) == "0"
    bad = run_cli("test", "-n", "many", cwd=tmp_path)
    assert bad.code == 1
    assert "-n/--numprocesses expects a number, auto or logical" in bad.stderr


def test_config_file_and_rootdir_choose_the_configuration(tmp_path: Path) -> None:
    """``-c FILE`` reads that file's configuration (its folder the rootdir); ``--rootdir`` must exist."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = -m 'not slow'\nmarkers = slow\n",
            "ci/ci.ini": "[pytest]\nmarkers = slow\npython_functions = check_*\n",
            "test_c.py": """
            import pytest

            @pytest.mark.slow
            def test_slow():
                pass

            def check_this():
                pass
            """,
        },
    )
    assert counts_from_pytest(run_pytest(cwd=tmp_path).stdout) == {}  # "1 deselected"
    assert summary_counts(run_cli("test", cwd=tmp_path).stderr) == {}
    for args in (["-c", "ci/ci.ini"], ["--config-file=ci/ci.ini"]):
        expected = counts_from_pytest(run_pytest(*args, "test_c.py", cwd=tmp_path).stdout)
        found = run_cli("test", *args, "test_c.py", cwd=tmp_path)
        assert summary_counts(found.stderr) == expected == {"pass": 1}, found.output
    missing = run_cli("test", "-c", "nope.ini", cwd=tmp_path)
    assert missing.code == 1
    assert "no such file" in missing.stderr
    bad = run_cli("test", "--rootdir=does-not-exist", cwd=tmp_path)
    assert bad.code == 1
    assert "Check your '--rootdir' option." in bad.stderr


@pytest.mark.parametrize(("color", "painted"), [("yes", True), ("no", False)])
def test_color_turns_rt_s_colours_on_or_off(tmp_path: Path, color: str, painted: bool) -> None:
    write_files(tmp_path, SUITE)
    found = run_cli("test", f"--color={color}", cwd=tmp_path)
    assert ("\x1b[" in found.stderr) is painted, found.stderr


def _junit(path: Path) -> tuple[dict[str, str | None], dict[str, list[tuple[str, str | None, str | None]]]]:
    """A JUnit report's totals (``<testsuites>`` for rt's, its first ``<testsuite>`` for pytest's) and each
    ``<testcase>``'s elements as (tag, type, message), by name (a failure's or error's type apart: pytest's
    junitxml writes none)."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    totals = root if root.get("tests") is not None else root[0]
    cases: dict[str, list[tuple[str, str | None, str | None]]] = {}
    for case in root.iter("testcase"):
        elements = cases.setdefault(str(case.get("name")), [])
        for child in case:
            if child.tag in ("failure", "error"):
                elements.append((child.tag, None, child.get("message")))
            elif child.tag == "skipped":
                elements.append((child.tag, child.get("type"), child.get("message")))
            elif child.tag == "properties":
                elements.extend(("property", p.get("name"), p.get("value")) for p in child)
    return {k: totals.get(k) for k in ("tests", "failures", "errors", "skipped")}, cases


def test_junit_writes_subtests_skips_and_properties_as_pytest_s_junitxml(tmp_path: Path) -> None:
    """pytest 9's junitxml: each failed subtest is a ``<failure>`` of its test's ``<testcase>`` (not a testcase
    of its own) and every subtest counts in ``tests``; the test its subtests failed has ``<failure
    message="contains 1 failed subtest">``; a skip is ``<skipped type="pytest.skip"
    message=reason>``; ``record_property`` pairs are the testcase's ``<properties>``."""
    write_files(
        tmp_path,
        {
            "test_j.py": """
            import unittest
            import pytest

            class TestUnit(unittest.TestCase):
                def test_sub(self):
                    for i in range(3):
                        with self.subTest(i=i):
                            self.assertLess(i, 1)

            def test_skip():
                pytest.skip("not here")

            @pytest.mark.skip(reason="marked")
            def test_skip_mark():
                pass

            def test_prop(record_property):
                record_property("example_key", 1)

            def test_sub_fixture(subtests):
                for i in range(2):
                    with subtests.test(msg="m", i=i):
                        assert i == 0

            @pytest.mark.xfail(reason="xf")
            def test_xf():
                assert 0
            """
        },
    )
    run_pytest("--junitxml=pytest.xml", "-o", "junit_family=xunit1", cwd=tmp_path)
    found = run_cli("test", "--junitxml=rt.xml", cwd=tmp_path)
    expected_totals, expected_cases = _junit(tmp_path / "pytest.xml")
    totals, cases = _junit(tmp_path / "rt.xml")
    assert cases == expected_cases, found.output
    assert totals == expected_totals
    assert [message for _, _, message in cases["test_sub"]] == [
        "AssertionError: 1 not less than 1",
        "AssertionError: 2 not less than 1",
    ]
    # the test its subtests failed: pytest's text, no type name (rt wrote ``SubtestsFailed: contains ...``)
    assert cases["test_sub_fixture"][-1] == ("failure", None, "contains 1 failed subtest")
    assert cases["test_skip"] == [("skipped", "pytest.skip", "not here")]
    assert cases["test_prop"] == [("property", "example_key", "1")]
    run_cli("test", "--junitxml=parallel.xml", "--parallel=2", cwd=tmp_path)  # the events cross the pipe
    assert _junit(tmp_path / "parallel.xml") == (totals, cases)


@pytest.mark.parametrize("parallel", [False, True], ids=["one process", "parallel"])
def test_ignored_files_are_not_shown(tmp_path: Path, parallel: bool) -> None:
    """A file left out by ``--ignore``, ``--ignore-glob`` or a conftest.py's ``collect_ignore`` is not
    collected: pytest shows nothing of it, and rt prints no empty ``file.py:`` header for it either."""
    write_files(
        tmp_path,
        {
            "conftest.py": "collect_ignore = ['test_by_conftest.py']\n",
            "test_kept.py": "def test_kept():\n    pass\n",
            "test_by_option.py": "def test_a():\n    pass\n",
            "test_by_glob.py": "def test_b():\n    pass\n",
            "sub/test_in_folder.py": "def test_c():\n    pass\n",
            "test_by_conftest.py": "def test_d():\n    pass\n",
        },
    )
    args = ["--ignore=test_by_option.py", "--ignore=sub", "--ignore-glob=*_glob.py"]
    found = run_cli("test", *args, *(["--parallel=2"] if parallel else []), cwd=tmp_path)
    assert summary_counts(found.stderr) == counts_from_pytest(run_pytest(*args, cwd=tmp_path).stdout)
    assert summary_counts(found.stderr) == {"pass": 1}, found.output
    headers = [line for line in found.stderr.splitlines() if line.endswith(".py:")]
    assert headers == ["test_kept.py:"], found.output


#: a stand-in for pytest-asyncio 1.x, installed as pytest finds it (a ``pytest11`` entry point): its ini
#: options and its own autouse ``event_loop_policy`` fixture, which returns the current policy. The counts
#: expected below are pytest 9.2's with the real pytest-asyncio 1.5.0 on the same files (checked by hand: the
#: real plugin is not in this repository's environment, where it would change how its own suite runs).
FAKE_ASYNCIO_PLUGIN = {
    "plugins/pytest_asyncio-1.5.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-asyncio\nVersion: 1.5.0\n",
    "plugins/pytest_asyncio-1.5.0.dist-info/entry_points.txt": "[pytest11]\nasyncio = pytest_asyncio.plugin\n",
    "plugins/pytest_asyncio/__init__.py": "",
    "plugins/pytest_asyncio/plugin.py": """
        import asyncio
        import pytest

        def pytest_addoption(parser, pluginmanager):
            parser.addini("asyncio_mode", help="", default="strict")
            parser.addini("asyncio_debug", help="", type="bool", default="false")
            parser.addini("asyncio_default_fixture_loop_scope", help="", type="string", default=None)
            parser.addini("asyncio_default_test_loop_scope", help="", type="string", default="function")

        @pytest.fixture(scope="session", autouse=True)
        def event_loop_policy():
            return asyncio.get_event_loop_policy()
    """,
}


@pytest.mark.parametrize("debug", [True, False])
def test_pytest_asyncio_event_loop_policy_fixture_and_asyncio_debug(tmp_path: Path, debug: bool) -> None:
    """pytest-asyncio 1.x: a conftest.py's ``event_loop_policy`` fixture (autouse through the plugin's name,
    with ``params``: every test runs once per policy) is the policy the tests' loops are made with and the
    current one while they run; ``asyncio_debug = true`` runs them in debug mode."""
    write_files(
        tmp_path,
        {
            **FAKE_ASYNCIO_PLUGIN,
            "pytest.ini": f"[pytest]\nasyncio_mode = auto\nasyncio_debug = {str(debug).lower()}\n",
            "conftest.py": """
            import asyncio
            import pytest

            class CustomPolicy(asyncio.DefaultEventLoopPolicy):
                def new_event_loop(self):
                    loop = super().new_event_loop()
                    loop.made_by_custom = True
                    return loop

            @pytest.fixture(scope="session", params=[CustomPolicy(), None], ids=["custom", "default"])
            def event_loop_policy(request):
                return request.param or asyncio.DefaultEventLoopPolicy()
            """,
            "test_policy.py": """
            import asyncio

            async def test_policy(request):
                custom = request.node.callspec.id == "custom"
                assert (type(asyncio.get_event_loop_policy()).__name__ == "CustomPolicy") is custom
                assert getattr(asyncio.get_running_loop(), "made_by_custom", False) is custom

            async def test_debug():
                assert asyncio.get_running_loop().get_debug()

            def test_sync():
                pass
            """,
        },
    )
    found = run_cli("test", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "plugins")})
    expected = {"pass": 6} if debug else {"pass": 4, "fail": 2}
    assert summary_counts(found.stderr) == expected, found.output
    assert "test_sync[custom]" in found.stderr


def test_collect_only_lists_pytest_s_node_ids_and_runs_nothing(tmp_path: Path) -> None:
    """``--co``/``--collect-only`` prints what ``pytest --co -q`` prints (the selected node ids, then the count
    line, ``-k`` deselection included) and runs no test; a file that fails to import exits 2."""
    write_files(
        tmp_path,
        {
            "test_a.py": """
            import pytest

            def test_ok():
                open("ran", "w").close()

            @pytest.mark.parametrize("x", [1, 2], ids=["one", "two"])
            def test_p(x):
                pass

            class TestC:
                def test_m(self):
                    pass
            """,
        },
    )
    for args in ([], ["-k", "TestC or one"]):
        expected = run_pytest("--co", "-q", *args, cwd=tmp_path)
        found = run_cli("test", "--co", *args, cwd=tmp_path)
        assert found.code == expected.code == 0, found.output
        ids = [line for line in found.stdout.splitlines() if "::" in line]
        assert ids == [line for line in expected.stdout.splitlines() if "::" in line], found.output
        count = found.stdout.strip().splitlines()[-1]
        assert count.rsplit(" in ", 1)[0] == expected.stdout.strip().splitlines()[-1].rsplit(" in ", 1)[0]
    assert not (tmp_path / "ran").exists()
    assert run_cli("test", "--collect-only", "-k", "nothing", cwd=tmp_path).code == 5
    write_files(tmp_path, {"test_broken.py": "import a_module_nobody_installed\n"})
    broken = run_cli("test", "--co", cwd=tmp_path)
    assert broken.code == 2
    assert "a_module_nobody_installed" in broken.stderr
    assert broken.stdout.strip().splitlines()[-1].startswith("4 tests collected, 1 error in ")


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["test_n.py::TestK::TestInner"],
        ["-m", "outer"],
        ["-k", "Deeper"],
        ["--deselect", "test_n.py::TestK::TestInner"],
    ],
    ids=lambda args: " ".join(args) or "all",
)
def test_test_classes_nested_in_test_classes_are_collected(tmp_path: Path, args: list[str]) -> None:
    """pytest collects a test class defined in a test class's body (``TestK::TestInner::test_in``), with the
    outer class's marks and fixtures; node ids, ``-m``, ``-k`` and ``--deselect`` reach it."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = outer\n",
            "test_n.py": """
            import pytest

            @pytest.mark.outer
            class TestK:
                @pytest.fixture
                def outer_fix(self):
                    return 5

                def test_plain(self):
                    pass

                class TestInner:
                    def test_in(self, outer_fix):
                        assert outer_fix == 5

                    class TestDeeper:
                        def test_deep(self):
                            pass

                class NotATest:
                    def test_no(self):
                        raise AssertionError("not collected")
            """,
        },
    )
    expected = counts_from_pytest(run_pytest(*args, cwd=tmp_path).stdout)
    found = run_cli("test", *args, cwd=tmp_path)
    assert summary_counts(found.stderr) == expected, found.output
    assert "fail" not in expected
