"""``rt test`` on what real suites' conftest.py files and tests do that the first suites tried did not (issue 15).

Each test is a mechanism found missing while running an unseen project's suite from its PyPI sdist (named in
the test's docstring); it writes a small project into a temporary directory and runs ``rt test`` on it.
"""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(
    root: Path, files: dict[str, str], *args: str, pythonpath: str = ""
) -> tuple[dict[str, int], str]:
    """Write ``files`` under ``root``, run ``rt test`` there: the summary's counts and the whole output."""
    result = run_cli(
        "test", *args, cwd=write_files(root, files), env={"PYTHONPATH": pythonpath} if pythonpath else None
    )
    return summary_counts(result.stderr), result.output


def test_generate_tests_sees_the_names_the_fixtures_request(tmp_path: Path) -> None:
    """parso 0.8.4: a fixture asks for a name no fixture defines, which ``pytest_generate_tests`` finds in
    ``metafunc.fixturenames`` (the whole fixture closure) and parametrizes."""
    found, output = rt_test(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            def pytest_generate_tests(metafunc):
                if "version" in metafunc.fixturenames:
                    metafunc.parametrize("version", ["3.8", "3.9"])

            @pytest.fixture
            def works_in(version):
                return f"py{version}"
            """,
            "test_versions.py": """
            def test_uses_the_fixture(works_in):
                assert works_in in ("py3.8", "py3.9")
            """,
        },
    )
    assert found == {"pass": 2}, output
    assert "test_uses_the_fixture[3.8]" in output and "test_uses_the_fixture[3.9]" in output, output


def test_what_a_fixture_stores_in_keywords_stays_for_the_test(tmp_path: Path) -> None:
    """parso 0.8.4: a parametrized fixture stores a value in ``request.keywords``, another fixture of the same
    test reads it back; a stored keyword also counts for ``-k``."""
    files = {
        "test_keywords.py": """
        import pytest

        @pytest.fixture(params=[1, 2])
        def node(request):
            request.keywords["expected"] = request.param * 10
            return request.param

        @pytest.fixture
        def expected(request, node):
            return request.keywords["expected"]

        def test_reads_it_back(node, expected):
            assert expected == node * 10

        def test_marks_are_keywords(request):
            assert "test_marks_are_keywords" in request.keywords
            assert "nothing" not in request.node.keywords
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 3}, output


def test_python_files_with_a_folder_match_the_end_of_the_path(tmp_path: Path) -> None:
    """Mako 1.3.5: ``python_files = test/*test_*.py`` (a pattern with a ``/`` matches the end of the file's
    path, as pytest's), with ``python_classes = *Test Test*``."""
    files = {
        "setup.cfg": """
        [tool:pytest]
        python_files = test/*test_*.py
        python_classes = *Test Test*
        """,
        "test/__init__.py": "",
        "test/test_found.py": """
        class LexerTest:
            def test_in_a_suffix_class(self):
                pass

        def test_found():
            pass
        """,
        "other/test_not_found.py": """
        def test_not_found():
            raise AssertionError("outside test/")
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 2}, output


def test_makereport_hooks_see_each_phase_before_the_next(tmp_path: Path) -> None:
    """The common conftest.py pattern: a hookwrapper keeps each phase's report on the item, and a fixture's
    teardown reads ``item.rep_call`` to act on a failure; a new-style ``wrapper=True`` hook sees them too."""
    files = {
        "conftest.py": """
        import pytest

        SEEN = []

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            setattr(item, "rep_" + report.when, report)

        @pytest.fixture
        def on_failure(request):
            yield
            SEEN.append((request.node.name, request.node.rep_setup.passed, request.node.rep_call.outcome))

        @pytest.fixture(scope="session", autouse=True)
        def check_at_the_end():
            yield
            assert SEEN == [("test_passes", True, "passed"), ("test_fails", True, "failed"),
                            ("test_skips", True, "skipped")], SEEN
            print("CHECKED")
        """,
        "tests/record.py": "WHEN = []",
        "tests/conftest.py": """
        import pytest
        from record import WHEN

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_makereport(item, call):
            report = yield
            WHEN.append((report.when, call.when, call.excinfo is not None))
            return report
        """,
        "tests/test_reports.py": """
        import pytest
        from record import WHEN

        def test_passes(on_failure):
            pass

        def test_fails(on_failure):
            raise AssertionError("on purpose")

        def test_skips(on_failure):
            pytest.skip("not here")

        def test_the_nearest_hook_saw_every_phase():
            assert WHEN == [
                ("setup", "setup", False), ("call", "call", False), ("teardown", "teardown", False),
                ("setup", "setup", False), ("call", "call", True), ("teardown", "teardown", False),
                ("setup", "setup", False), ("call", "call", True), ("teardown", "teardown", False),
                ("setup", "setup", False),
            ], WHEN
        """,
    }
    found, output = rt_test(tmp_path, files, "-s")
    assert found == {"pass": 2, "fail": 1, "skip": 1}, output
    assert "CHECKED" in output, output


def test_more_built_in_fixtures(tmp_path: Path) -> None:
    """capfdbinary, cache (kept between runs, where pytest keeps it), record_property, tmpdir_factory's
    py.path objects, and a conftest option whose string default its ``type`` converts (as argparse)."""
    files = {
        "conftest.py": """
        def pytest_addoption(parser):
            parser.addoption("--level", default="3", type=int)
        """,
        "test_builtins.py": """
        import os

        def test_capfdbinary(capfdbinary):
            os.write(1, b"bytes")
            assert capfdbinary.readouterr().out == b"bytes"

        def test_cache(cache):
            runs = cache.get("probe/runs", 0)
            cache.set("probe/runs", runs + 1)
            assert cache.mkdir("work").is_dir()

        def test_record_property(record_property, request):
            record_property("size", 3)
            assert request.node.user_properties == [("size", 3)]

        def test_tmpdir_factory(tmpdir_factory):
            folder = tmpdir_factory.mktemp("data")
            folder.join("x.txt").write("text")
            assert folder.join("x.txt").read() == "text"

        def test_option_type(pytestconfig):
            assert pytestconfig.getoption("level") == 3
        """,
    }
    for _ in range(2):
        found, output = rt_test(tmp_path, files)
        assert found == {"pass": 5}, output
    assert (tmp_path / ".pytest_cache" / "v" / "probe" / "runs").read_text() == "2"


def test_collection_hooks_reach_parents_and_config_hook(tmp_path: Path) -> None:
    """A ``pytest_collection_modifyitems`` that walks to the item's class and module
    (``item.getparent(pytest.Class)``, ``item.parent``, ``item.location``) and drops items the way suites do,
    telling ``config.hook.pytest_deselected`` about them."""
    files = {
        "conftest.py": """
        import pytest

        DESELECTED = []

        def pytest_deselected(items):
            DESELECTED.extend(item.name for item in items)

        def pytest_collection_modifyitems(config, items):
            keep, drop = [], []
            for item in items:
                (drop if "drop" in item.nodeid else keep).append(item)
                assert item.getparent(pytest.Module).obj.__name__ == "test_parents"
                assert item.location[0] == "test_parents.py"
                cls = item.getparent(pytest.Class)
                if cls is not None and cls.get_closest_marker("slow") is not None:
                    item.add_marker(pytest.mark.skip(reason="slow class"))
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

        @pytest.fixture
        def deselected():
            return DESELECTED
        """,
        "test_parents.py": """
        import pytest

        def test_keep(deselected, request):
            assert deselected == ["test_drop"]
            assert request.node.parent.name == "test_parents.py"
            assert [n.name for n in request.node.listchain()][-2:] == ["test_parents.py", "test_keep"]

        def test_drop():
            raise AssertionError("deselected")

        @pytest.mark.slow
        class TestSlow:
            def test_skipped(self):
                raise AssertionError("skipped by the hook")

        class TestFast:
            def test_parent_is_the_class(self, request):
                assert request.node.parent.name == "TestFast"
                assert request.node.parent.obj is TestFast
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 2, "skip": 1}, output


def test_pytest_timeout_ini_value_applies_when_the_plugin_is_installed(tmp_path: Path) -> None:
    """tqdm 4.66.5: ``timeout = 30`` in its pytest configuration (pytest-timeout's ini value) bounds every
    test, as under pytest with the plugin installed; a ``timeout(0)`` mark lifts it; without the plugin,
    pytest ignores the value and so does rt."""
    files = {
        "pytest.ini": """
        [pytest]
        timeout = 1
        """,
        "test_hangs.py": """
        import threading
        import time
        import pytest

        def test_hangs():
            threading.Event().wait()

        @pytest.mark.timeout(0)
        def test_no_limit():
            time.sleep(1.5)
        """,
        # stands for the installed plugin: rt only asks whether it is there
        "plugin/pytest_timeout.py": "",
    }
    found, output = rt_test(tmp_path, files, pythonpath=str(tmp_path / "plugin"))
    assert found == {"pass": 1, "fail": 1}, output
    assert "timed out" in output.lower(), output

    (tmp_path / "test_hangs.py").write_text("import time\n\ndef test_sleeps():\n    time.sleep(1.5)\n")
    found, output = rt_test(tmp_path, {})
    assert found == {"pass": 1}, output


def test_pytest_timeout_func_only_times_the_call_and_a_set_up_time_out_is_an_error(tmp_path: Path) -> None:
    """pytest-timeout 2.4.0's ``timeout_func_only = true`` (and a ``timeout(..., func_only=...)`` mark): the
    time-out bounds the test's call alone, not its fixtures; a time-out while the fixtures are set up is an
    error. pytest 9.2 with the plugin on this project: 1 failed (``Failed: Timeout (>1.0s) from
    pytest-timeout.``), 1 passed, 1 error. rt timed the whole test (2 failed, 1 passed: the slow fixture's test
    failed, the set-up time-out counted as a failure), and it called the plugin's own ``pytest_runtest_call``
    wrapper, whose handler failed on rt's config and which put back the default ``SIGALRM`` handler (the
    plugin itself cannot be installed here: a module of its name stands for it, as rt only asks whether it is
    there)."""
    files = {
        "pytest.ini": """
        [pytest]
        timeout = 1
        timeout_func_only = true
        """,
        "test_slow.py": """
        import time

        import pytest


        @pytest.fixture
        def slow():
            time.sleep(1.2)
            yield
            time.sleep(1.2)


        def test_slow_fixture_passes(slow):
            pass


        def test_slow_call_fails():
            time.sleep(30)


        @pytest.mark.timeout(1, func_only=False)
        def test_slow_set_up_is_an_error(slow):
            pass
        """,
        "plugin/pytest_timeout.py": "",
    }
    found, output = rt_test(tmp_path, files, pythonpath=str(tmp_path / "plugin"))
    assert found == {"pass": 1, "fail": 1, "error": 1}, output
    assert "Timeout (>1.0s) from pytest-timeout." in output, output


def test_parametrized_given_methods_run_as_under_hypothesis_pytest_plugin(tmp_path: Path) -> None:
    """h2 4.1.0: a ``@given`` method of a test class with ``parametrize`` marks runs on a new instance for
    each parameter set; Hypothesis's pytest plugin lifts its "differing executors" health check for such
    tests, and so does rt (else every parameter set after the first fails)."""
    files = {
        "test_given.py": """
        import pytest
        from hypothesis import given, settings, strategies as st

        class TestFilter:
            @pytest.mark.parametrize("flag", [1, 2, 3])
            @given(value=st.integers())
            @settings(max_examples=5, database=None)
            def test_method(self, value, flag):
                assert isinstance(value, int)

            @pytest.fixture(params=["a", "b"], scope="class")
            def letter(self, request):
                return request.param

            @given(value=st.booleans())
            @settings(max_examples=2, database=None)
            def test_fixture_params(self, letter, value):
                assert letter in "ab"
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 5}, output


def test_only_a_parametrized_test_has_a_callspec(tmp_path: Path) -> None:
    """Suites ask ``hasattr(request.node, "callspec")`` to tell a parametrized test from a plain one."""
    files = {
        "test_callspec.py": """
        import pytest

        def test_plain(request):
            assert not hasattr(request.node, "callspec")

        @pytest.mark.parametrize("a", [1])
        def test_parametrized(request, a):
            assert request.node.callspec.params == {"a": 1}
            assert request.node.callspec.id == "1"
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 2}, output


def test_output_of_threads_a_test_starts_is_its_own(tmp_path: Path) -> None:
    """aiofiles 24.1.0: its ``stdout`` writes to ``sys.stdout`` from a thread of the event loop's executor,
    and the test reads it back with ``capsys``; reading ``sys.stdin`` while output is captured raises
    OSError, as under pytest."""
    files = {
        "test_threads.py": """
        import asyncio
        import logging
        import sys
        import threading

        import pytest

        def test_thread_output(capsys):
            worker = threading.Thread(target=print, args=("from a thread",))
            worker.start()
            worker.join()
            assert capsys.readouterr().out == "from a thread\\n"

        @pytest.fixture
        def anyio_backend():  # aiofiles runs it with pytest-asyncio; pytest itself runs no coroutine
            return "asyncio"

        @pytest.mark.anyio
        async def test_executor_output(capsys):
            await asyncio.get_running_loop().run_in_executor(None, sys.stderr.write, "from the executor")
            assert capsys.readouterr().err == "from the executor"

        def test_thread_failure_shows_its_output():
            worker = threading.Thread(target=logging.getLogger("w").warning, args=("logged in a thread",))
            worker.start()
            worker.join()
            raise AssertionError("on purpose")

        def test_stdin():
            with pytest.raises(OSError):
                sys.stdin.read()
            with pytest.raises(OSError):
                sys.stdin.buffer.read()
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 3, "fail": 1}, output
    assert "----- Captured log call -----\nWARNING  w:" in output and "logged in a thread" in output, output


def test_a_modifyitems_order_places_classes_by_their_tests(tmp_path: Path) -> None:
    """``items[:] = reversed(items)``: a test class runs where the hook put its tests, not first."""
    files = {
        "conftest.py": """
        def pytest_collection_modifyitems(items):
            items[:] = list(reversed(items))
        """,
        "test_order.py": """
        ORDER = []

        def test_0_runs_last():
            assert ORDER == ["z", "b", "a"], ORDER

        class TestFirst:
            def test_a(self):
                ORDER.append("a")

        def test_b():
            ORDER.append("b")

        def test_z():
            ORDER.append("z")
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 4}, output


def test_deselected_hooks_hear_of_the_tests_left_out(tmp_path: Path) -> None:
    """pytest-json-report 1.5 counts the tests ``-k``, ``-m`` and ``--deselect`` leave out from
    ``pytest_deselected(items)`` (its summary's ``deselected`` and ``collected``), as conftest.py files that
    report what did not run do; rt never called the hook (and its ``session.testscollected`` counted the
    tests left out). What the hook heard is the same under both runners."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            LEFT_OUT = []


            def pytest_configure(config):
                config.addinivalue_line("markers", "net: needs the network")


            def pytest_deselected(items):
                LEFT_OUT.extend(item.nodeid for item in items)


            def pytest_sessionfinish(session):
                with open("deselected.txt", "w") as file:
                    file.write("\\n".join([str(session.testscollected), *sorted(LEFT_OUT)]))
            """,
            "test_some.py": """
            import pytest


            def test_fast():
                pass


            def test_slow():
                pass


            @pytest.mark.net
            def test_download():
                pass


            class TestGroup:
                def test_kept(self):
                    pass

                def test_dropped(self):
                    pass
            """,
        },
    )
    args = ("-k", "not slow", "-m", "not net", "--deselect", "test_some.py::TestGroup::test_dropped")
    pytest_run = run_pytest(*args, cwd=tmp_path)
    expected = (tmp_path / "deselected.txt").read_text()
    (tmp_path / "deselected.txt").unlink()
    assert expected.startswith("2\n") and expected.count("test_some.py::") == 3, pytest_run.output
    rt_run = run_cli("test", *args, cwd=tmp_path)
    assert (tmp_path / "deselected.txt").read_text() == expected, rt_run.output
    assert summary_counts(rt_run.stderr) == counts_from_pytest(pytest_run.stdout) == {"pass": 2}, (
        rt_run.output
    )


def test_terminal_summary_hooks_print_after_the_run(tmp_path: Path) -> None:
    """pytest-benchmark 5.3 prints its table, pytest-html 4.2 and pytest-json-report 1.5 the files they wrote,
    from ``pytest_terminal_summary(terminalreporter, exitstatus, config)``, as conftest.py files print their
    own notes. rt called none of them. The lines they print, in pluggy's order, are pytest's."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_terminal_summary(terminalreporter, exitstatus, config):
                terminalreporter.write_sep("-", "suite notes")
                terminalreporter.write_line(f"exit status {exitstatus}, verbosity {terminalreporter.verbosity}")
            """,
            "sub/conftest.py": """
            import pytest


            @pytest.hookimpl(tryfirst=True)
            def pytest_terminal_summary(terminalreporter):
                terminalreporter.write_line("the first note")
            """,
            "sub/test_one.py": """
            def test_fails():
                assert False
            """,
        },
    )
    pytest_run = run_pytest(cwd=tmp_path)
    notes = ["the first note", "suite notes", "exit status 1, verbosity 0"]
    found = [line for line in pytest_run.stdout.splitlines() if any(note in line for note in notes)]
    assert [next(note for note in notes if note in line) for line in found] == notes, pytest_run.output
    rt_run = run_cli("test", cwd=tmp_path)
    assert [line for line in rt_run.stdout.splitlines() if any(note in line for note in notes)] == found, (
        rt_run.output
    )


def test_warning_recorded_hooks_get_each_tests_warnings(tmp_path: Path) -> None:
    """pytest-json-report 1.5 lists the warnings of the run from ``pytest_warning_recorded(warning_message,
    when, nodeid, location)``; rt never called the hook. What the hook heard (the test, the phase, the
    warning) is the same under both runners; a filtered-out warning is not heard."""
    write_files(
        tmp_path,
        {
            "pytest.ini": """
            [pytest]
            filterwarnings = ignore:quiet:UserWarning
            """,
            "conftest.py": """
            HEARD = []


            def pytest_warning_recorded(warning_message, when, nodeid):
                HEARD.append(f"{nodeid} {when} {warning_message.category.__name__}: {warning_message.message}")


            def pytest_sessionfinish(session):
                with open("heard.txt", "w") as file:
                    file.write("\\n".join(HEARD))
            """,
            "test_warns.py": """
            import warnings


            def test_warns():
                warnings.warn("loud", UserWarning)
                warnings.warn("quiet", UserWarning)


            def test_deprecated():
                warnings.warn("old", DeprecationWarning)


            def test_silent():
                pass
            """,
        },
    )
    pytest_run = run_pytest(cwd=tmp_path)
    expected = (tmp_path / "heard.txt").read_text()
    (tmp_path / "heard.txt").unlink()
    assert "test_warns.py::test_warns runtest UserWarning: loud" in expected, pytest_run.output
    assert "quiet" not in expected and "DeprecationWarning: old" in expected, pytest_run.output
    rt_run = run_cli("test", cwd=tmp_path)
    assert (tmp_path / "heard.txt").read_text() == expected, rt_run.output


def test_trylast_runtest_hooks_run_after_pytests_own_set_up_call_and_teardown(tmp_path: Path) -> None:
    """pytest's own ``pytest_runtest_setup``, ``_call`` and ``_teardown`` (its runner plugin's, which set the
    fixtures up, call the test, tear the fixtures down) are plain hooks registered before any suite's, so
    pluggy calls a suite's plain hooks before them and its ``trylast`` ones after them: a ``trylast`` set-up
    hook sees the fixtures set up, a ``trylast`` teardown hook runs once they are torn down. rt called its own
    work after every hook of the suite, ``trylast`` ones included. pytest 9.2: 2 passed."""
    files = {
        "order.py": "SEEN = []\n",
        "conftest.py": """
        import pytest

        from order import SEEN


        @pytest.fixture
        def resource():
            SEEN.append("fixture set up")
            yield
            SEEN.append("fixture torn down")


        @pytest.hookimpl(trylast=True)
        def pytest_runtest_setup(item):
            SEEN.append("trylast setup")


        @pytest.hookimpl(trylast=True)
        def pytest_runtest_call(item):
            SEEN.append("trylast call")


        @pytest.hookimpl(trylast=True)
        def pytest_runtest_teardown(item):
            SEEN.append("trylast teardown")
        """,
        "test_order.py": """
        from order import SEEN


        def test_first(resource):
            SEEN.append("test")


        def test_second():
            assert SEEN[:6] == [
                "fixture set up",
                "trylast setup",
                "test",
                "trylast call",
                "fixture torn down",
                "trylast teardown",
            ]
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected = counts_from_pytest(run_pytest(cwd=tmp_path, timeout=180).stdout)
    assert expected == {"pass": 2}
    assert found == expected, output


def test_marks_hooks_give_a_class_or_module_node_select_its_tests_with_m_and_k(tmp_path: Path) -> None:
    """pytest's ``-m`` and ``-k`` read ``item.iter_markers()`` and ``item.keywords`` after the collection hooks,
    and a test's markers include those of its class and module nodes: a ``pytest_collection_modifyitems``
    that marks a class (``item.getparent(pytest.Class).add_marker``), one that marks ``item.parent`` or the
    module, and a ``pytest_itemcollected`` that marks ``item.parent`` select those tests. rt read the test's
    own marks only: ``-m heavy`` ran none of them ("No tests matched the filters"), ``-m "not heavy"`` all,
    and a ``skip`` or ``xfail`` mark given to a class so was not applied (its tests ran and failed). pytest
    9.2: the same tests for each expression; 7 passed, 1 skipped, 1 xfailed without one."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers =\n    heavy\n    via_parent\n    at_collect\n    whole_module\n",
            "conftest.py": """
            import pytest


            def pytest_collection_modifyitems(items):
                for item in items:
                    node = item.getparent(pytest.Class)
                    if node is not None and node.name == "TestBig":
                        node.add_marker("heavy")
                    if item.name == "test_parent_marked":
                        item.parent.add_marker("via_parent")
                    if item.name == "test_in_marked_module":
                        item.getparent(pytest.Module).add_marker("whole_module")
                    if node is not None and node.name == "TestDropped":
                        node.add_marker(pytest.mark.skip(reason="by the hook"))
                    if node is not None and node.name == "TestKnown":
                        node.add_marker(pytest.mark.xfail(reason="by the hook", strict=True))


            def pytest_itemcollected(item):
                if item.name == "test_seen_at_collect":
                    item.parent.add_marker(pytest.mark.at_collect)


            def pytest_runtest_setup(item):
                if item.get_closest_marker("heavy") is None and item.cls is not None:
                    assert item.cls.__name__ != "TestBig", "the class's mark is not the test's"
                with open("ran.log", "a") as log:
                    log.write(item.nodeid + "\\n")
            """,
            "test_m.py": """
            class TestBig:
                def test_one(self):
                    pass

                def test_two(self):
                    pass


            class TestOther:
                def test_parent_marked(self):
                    pass

                def test_seen_at_collect(self):
                    pass


            def test_plain():
                pass


            class TestDropped:
                def test_never_run(self):
                    raise AssertionError("skipped by the hook's mark")


            class TestKnown:
                def test_known_failure(self):
                    raise AssertionError("expected to fail by the hook's mark")
            """,
            "test_n.py": """
            def test_in_marked_module():
                pass


            def test_other():
                pass
            """,
        },
    )
    expressions = [
        ("-m", "heavy"),
        ("-m", "not heavy and (via_parent or at_collect or whole_module)"),
        ("-k", "heavy or at_collect"),
    ]
    log = tmp_path / "ran.log"
    for flag, expression in expressions:
        log.unlink(missing_ok=True)
        by_pytest = run_pytest("-p", "no:randomly", flag, expression, cwd=tmp_path)
        pytest_ran = sorted(log.read_text().splitlines()) if log.exists() else []
        log.unlink(missing_ok=True)
        by_rt = run_cli("test", "-p", "no:randomly", flag, expression, cwd=tmp_path)
        rt_ran = sorted(log.read_text().splitlines()) if log.exists() else []
        pytest_counts = counts_from_pytest(by_pytest.stdout)
        assert pytest_counts.get("pass"), (expression, by_pytest.output)
        assert summary_counts(by_rt.stderr)["pass"] == pytest_counts["pass"], (expression, by_rt.output)
        assert rt_ran == pytest_ran, expression
    # and a skip or xfail mark the hook gives a class skips its tests or expects them to fail
    by_pytest = run_pytest("-p", "no:randomly", cwd=tmp_path)
    by_rt = run_cli("test", "-p", "no:randomly", cwd=tmp_path)
    assert counts_from_pytest(by_pytest.stdout) == {"pass": 7, "skip": 1, "xfail": 1}
    assert summary_counts(by_rt.stderr) == counts_from_pytest(by_pytest.stdout), by_rt.output
