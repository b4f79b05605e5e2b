"""``rt test`` on how pytest collects a session: collection errors, conftest.py collectors and the
collection hooks (issue 15).

Each test writes a small project into a temporary directory and runs ``rt test`` on it, and where the
behaviour is pytest's own, pytest too, comparing the outcome counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(root: Path, files: dict[str, str], *args: str) -> tuple[dict[str, int], str]:
    """Write ``files`` under ``root``, run ``rt test`` there: the summary's counts and the whole output
    (as test_pytest_suite_hooks.py's helper of the same name)."""
    result = run_cli("test", *args, cwd=write_files(root, files))
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """pytest's outcome counts on ``root``, in rt's words, and its output."""
    result = run_pytest(*args, cwd=root, timeout=120)
    return counts_from_pytest(result.stdout), result.output


_BROKEN_SUITE = {
    "test_a.py": """
    def test_a():
        pass
    """,
    "test_b.py": """
    import a_module_nobody_installed

    def test_b():
        pass
    """,
    "test_c.py": """
    import pytest

    pytest.skip("not on this platform", allow_module_level=True)
    """,
    "sub/conftest.py": """
    raise RuntimeError("a conftest.py that fails")
    """,
    "sub/test_d.py": """
    def test_d():
        pass
    """,
}


def test_a_collection_error_stops_the_run_as_pytest(tmp_path: Path) -> None:
    """pytest collects the whole session first and, when a test module or a conftest.py fails to import,
    runs no test: "Interrupted: 2 errors during collection" (the skipped module still counts)."""
    found, output = rt_test(tmp_path, _BROKEN_SUITE)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"skip": 1, "error": 2}, pytest_output
    assert found == expected, output
    assert "Interrupted: 2 errors during collection" in output, output
    assert "a_module_nobody_installed" in output and "a conftest.py that fails" in output, output


def test_continue_on_collection_errors_runs_the_rest(tmp_path: Path) -> None:
    """``--continue-on-collection-errors``, on the command line or in ``addopts``: the other files run."""
    found, output = rt_test(tmp_path, _BROKEN_SUITE, "--continue-on-collection-errors")
    expected, pytest_output = pytest_counts(tmp_path, "--continue-on-collection-errors")
    assert expected == {"pass": 1, "skip": 1, "error": 2}, pytest_output
    assert found == expected, output
    assert "Interrupted" not in output, output
    found, output = rt_test(tmp_path, {"pytest.ini": "[pytest]\naddopts = --continue-on-collection-errors\n"})
    assert found == expected, output
    assert "ignoring addopts" not in output, output


def test_a_spec_pattern_file_that_fails_to_load_keeps_the_reference_behaviour(tmp_path: Path) -> None:
    """In a project with no pytest configuration and no conftest.py, a file of the spec's patterns that
    fails to load is one error and the other files run, as the reference runtime runs them."""
    files = {
        "broken_test.py": "raise RuntimeError('boom at import')\n",
        "math.test.py": """
        from rt.test import expect, test

        test("adds", lambda: expect(1 + 1).to_be(2))
        """,
    }
    found, output = rt_test(tmp_path, files)
    assert found == {"pass": 1, "error": 1}, output
    assert "Interrupted" not in output, output


@pytest.mark.parametrize("constructor", ["__init__", "__new__"])
def test_a_test_class_with_a_constructor_warns_as_pytest(tmp_path: Path, constructor: str) -> None:
    """pytest leaves out a ``Test*`` class with a constructor of its own and says so with a
    ``PytestCollectionWarning``: listed in the warnings summary alone, but an error once a module imported earlier made
    warnings errors (markdown's ``tests/test_legacy.py`` calls ``warnings.simplefilter('error')``), so the
    later file is a collection error under pytest, and under rt too."""
    method = (
        "def __init__(self):\n        pass"
        if constructor == "__init__"
        else ("def __new__(cls):\n        return object.__new__(cls)")
    )
    files = {
        "test_a.py": "def test_a():\n    pass\n",
        "test_b.py": f"class TestSuite:\n    {method}\n\n    def test_never(self):\n        pass\n\n"
        "def test_b():\n    pass\n",
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 2}, pytest_output
    assert found == expected, output
    # not printed while collecting: once, in the "warnings summary" section, as pytest prints it
    assert output.count("cannot collect") == pytest_output.count("cannot collect") == 1, output
    assert output.index("warnings summary") < output.index("cannot collect"), output
    errors = {"test_a.py": "import warnings\n\nwarnings.simplefilter('error')\n\ndef test_a():\n    pass\n"}
    found, output = rt_test(tmp_path, errors)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"error": 1}, pytest_output
    assert found == expected, output
    assert (
        f"cannot collect test class 'TestSuite' because it has a {constructor} constructor (from: test_b.py)"
        in output
    ), output


def test_a_collection_error_stops_a_parallel_run_too(tmp_path: Path) -> None:
    found, output = rt_test(tmp_path, _BROKEN_SUITE, "--parallel=2")
    assert found == {"skip": 1, "error": 2}, output


def test_pyfunc_call_hooks_run_coroutines_on_their_own_loop(tmp_path: Path) -> None:
    """An older async suite: its conftest.py's ``pytest_pyfunc_call`` runs each coroutine test on an event
    loop of its own (``run_until_complete``) and returns True, so the call is done; the test runs outside
    rt's loop. Wrappers of ``pytest_pyfunc_call`` and ``pytest_runtest_call`` see every call."""
    files = {
        "conftest.py": """
        import asyncio
        import inspect

        pytest_plugins = ["wrapping"]
        LOOPS = []

        def pytest_pyfunc_call(pyfuncitem):
            if inspect.iscoroutinefunction(pyfuncitem.obj):
                funcargs = pyfuncitem.funcargs
                testargs = {arg: funcargs[arg] for arg in pyfuncitem._fixtureinfo.argnames}
                loop = asyncio.new_event_loop()
                LOOPS.append(loop)
                try:
                    loop.run_until_complete(pyfuncitem.obj(**testargs))
                finally:
                    loop.close()
                return True
        """,
        "wrapping.py": """
        import pytest

        SEEN = []

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_call(item):
            SEEN.append(("runtest", item.name))
            return (yield)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_pyfunc_call(pyfuncitem):
            outcome = yield
            SEEN.append(("pyfunc", pyfuncitem.name, outcome.excinfo is None))
        """,
        "test_async.py": """
        import asyncio

        import pytest

        @pytest.fixture
        def value():
            return 3

        async def test_coroutine(value):
            from conftest import LOOPS

            await asyncio.sleep(0)
            assert value == 3 and asyncio.get_running_loop() is LOOPS[-1]

        class TestGroup:
            async def test_method(self, value):
                assert isinstance(self, TestGroup) and value == 3

        @pytest.mark.parametrize("n", [1, 2])
        async def test_param(n, value):
            assert n < 2

        def test_sync():
            pass
        """,
        "test_z.py": """
        from wrapping import SEEN

        def test_wrappers_saw_every_call():
            assert ("runtest", "test_coroutine") in SEEN and ("pyfunc", "test_sync", True) in SEEN
            assert ("pyfunc", "test_param[2]", False) in SEEN, SEEN
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 5, "fail": 1}, pytest_output
    assert found == expected, output
    assert "test_param[2]" in output, output


_YAML_SUITE = {
    "conftest.py": """
    import json

    import pytest

    def pytest_collect_file(parent, file_path):
        if file_path.suffix == ".yaml" and file_path.name.startswith("test"):
            return SpecFile.from_parent(parent, path=file_path)

    class SpecFile(pytest.File):
        def collect(self):
            for name, spec in sorted(json.loads(self.path.read_text()).items()):
                yield SpecItem.from_parent(self, name=name, spec=spec)

    class SpecItem(pytest.Item):
        def __init__(self, *, spec, **kwargs):
            super().__init__(**kwargs)
            self.spec = spec
            if spec.get("slow"):
                self.add_marker(pytest.mark.slow)

        def runtest(self):
            for name, value in sorted(self.spec.items()):
                if name == "skip":
                    pytest.skip("skipped by its spec")
                if name != "slow" and name != value:
                    raise SpecMismatch(name, value)

        def repr_failure(self, excinfo):
            if isinstance(excinfo.value, SpecMismatch):
                return "spec failed: {0!r} is not {1!r}".format(*excinfo.value.args)
            return super().repr_failure(excinfo)

        def reportinfo(self):
            return self.path, 0, f"usecase: {self.name}"

    class SpecMismatch(Exception):
        pass
    """,
    "pytest.ini": "[pytest]\nmarkers =\n    slow: slow cases\n",
    "cases/test_cases.yaml": """
    {"same": {"a": "a"}, "differs": {"a": "b"}, "skipped": {"skip": 1}, "slow_one": {"slow": true, "b": "b"}}
    """,
    "cases/notes.yaml": "not a test file of the hook\n",
    "test_plain.py": """
    def test_plain():
        pass
    """,
}


def test_conftest_collectors_of_non_python_files(tmp_path: Path) -> None:
    """pytest's "non-python tests": a conftest.py's ``pytest_collect_file`` returns a ``pytest.File`` whose
    ``collect()`` yields ``pytest.Item`` subclasses. Their tests are counted, named by pytest's node ids,
    selected by ``-k``, ``-m`` and node id, and a failure is shown as the item's ``repr_failure`` writes it."""
    found, output = rt_test(tmp_path, _YAML_SUITE)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 3, "fail": 1, "skip": 1}, pytest_output
    assert found == expected, output
    assert "spec failed: 'a' is not 'b'" in output, output
    assert "notes.yaml" not in output, output
    found, output = rt_test(tmp_path, {}, "-k", "same or differs")
    assert found == {"pass": 1, "fail": 1}, output
    found, output = rt_test(tmp_path, {}, "-m", "slow")
    assert found == {"pass": 1}, output
    assert "slow_one" in output, output
    found, output = rt_test(tmp_path, {}, "cases/test_cases.yaml::same")
    assert found == {"pass": 1}, output
    found, output = rt_test(tmp_path, {}, "--parallel=2")
    assert found == expected, output


def test_a_conftest_doctest_module_collector_is_rts_doctests(tmp_path: Path) -> None:
    """babel 2.16.0: its conftest.py returns pytest's ``DoctestModule`` for the package's modules, which are
    no test files: their docstrings' examples are tests."""
    files = {
        "conftest.py": """
        from pathlib import Path

        from _pytest.doctest import DoctestModule

        here = Path(__file__).parent / "pkg"

        def pytest_collect_file(file_path, parent):
            if here in file_path.parents and file_path.suffix == '.py':
                return DoctestModule.from_parent(parent, path=file_path)
        """,
        "pkg/__init__.py": "",
        "pkg/numbers.py": '''
        def double(x):
            """
            >>> double(2)
            4
            >>> double(3)
            7
            """
            return x * 2

        def half(x):
            """
            >>> half(4)
            2.0
            """
            return x / 2
        ''',
        "tests/test_numbers.py": """
        from pkg.numbers import double

        def test_double():
            assert double(1) == 2
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 2, "fail": 1}, pytest_output
    assert found == expected, output
    assert "pkg.numbers.double" in output, output


def test_collection_modifyitems_is_called_once_for_the_session(tmp_path: Path) -> None:
    """``pytest_collection_modifyitems`` of every conftest.py is called once, with every item of the
    session (a subfolder's conftest.py too sees the other folders' items): a hook that counts the items or
    drops some of another folder sees what it sees under pytest; ``pytest_collection_finish`` then sees
    ``session.items``."""
    files = {
        "conftest.py": """
        def pytest_configure(config):
            config.modify_calls = 0

        def pytest_collection_modifyitems(config, items):
            config.modify_calls += 1
            config.seen = len(items)
            items[:] = [item for item in items if "drop" not in item.name]

        def pytest_collection_finish(session):
            session.config.finished = len(session.items)
        """,
        "sub/conftest.py": """
        def pytest_collection_modifyitems(items):
            for item in items:
                item.add_marker("seen_by_sub")
        """,
        "test_a.py": """
        def test_a(request):
            assert request.node.get_closest_marker("seen_by_sub") is not None

        def test_drop_me():
            raise AssertionError("deselected by the hook")
        """,
        "sub/test_b.py": """
        def test_counts(request):
            config = request.config
            assert (config.modify_calls, config.seen, config.finished) == (1, 4, 3)

        def test_b():
            pass
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 3}, pytest_output
    assert found == expected, output


def test_unittest_classes_get_setup_method_and_fixture_methods(tmp_path: Path) -> None:
    """pytest makes a ``unittest.TestCase``'s instance before its fixtures: ``setup_method`` and
    ``teardown_method`` run on it, and an autouse fixture defined as a method of the class
    (``def inject(self, tmp_path): self.tmp = tmp_path``) sets attributes the test then reads."""
    files = {
        "test_cases.py": """
        import unittest

        import pytest

        class TestMethods(unittest.TestCase):
            def setup_method(self, method):
                self.value = method.__name__

            def test_one(self):
                self.assertEqual(self.value, "test_one")

            def test_two(self):
                self.assertEqual(self.value, "test_two")

        class TestInject(unittest.TestCase):
            @pytest.fixture(autouse=True)
            def inject(self, tmp_path):
                self.tmp = tmp_path

            def test_tmp(self):
                self.assertTrue(self.tmp.is_dir())
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 3}, pytest_output
    assert found == expected, output


def test_parametrize_ids_from_a_conftest_hook_and_items_collected(tmp_path: Path) -> None:
    """``pytest_make_parametrize_id(config, val, argname)`` names the values it knows (the test's id and
    ``-k`` use it); ``pytest_itemcollected(item)`` sees every item once."""
    files = {
        "conftest.py": """
        SEEN = []

        def pytest_make_parametrize_id(config, val, argname):
            if isinstance(val, dict):
                return f"{argname}-{sorted(val)[0]}"

        def pytest_itemcollected(item):
            SEEN.append(item.nodeid)
        """,
        "test_ids.py": """
        import pytest

        @pytest.mark.parametrize("spec", [{"alpha": 1}, {"beta": 2}, 3])
        def test_spec(spec):
            pass

        def test_seen():
            from conftest import SEEN

            assert "test_ids.py::test_spec[spec-alpha]" in SEEN and len(SEEN) == 4, SEEN
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 4}, pytest_output
    assert found == expected, output
    assert "test_spec[spec-beta]" in output and "test_spec[3]" in output, output
    found, output = rt_test(tmp_path, {}, "-k", "beta")
    assert found == {"pass": 1}, output


def test_a_conftest_returning_pytest_module_collects_its_own_file_names(tmp_path: Path) -> None:
    """A conftest.py's ``pytest_collect_file`` returning ``pytest.Module`` for files of the suite's own naming
    (``check_*.py``): their tests are collected as a test module's, fixtures and parametrize included."""
    files = {
        "conftest.py": """
        import pytest

        def pytest_collect_file(parent, file_path):
            if file_path.suffix == ".py" and file_path.name.startswith("check_"):
                return pytest.Module.from_parent(parent, path=file_path)

        @pytest.fixture
        def three():
            return 3

        def pytest_collection_modifyitems(items):
            names = [item.name for item in items]
            assert len(names) == len(set(names)), names
        """,
        "check_things.py": """
        import pytest

        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_small(n, three):
            assert n <= three

        def test_fails():
            assert False
        """,
        "test_plain.py": """
        def test_plain():
            pass
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 4, "fail": 1}, pytest_output
    assert found == expected, output


_MAKEITEM_ITEMS = """
import pytest


class CaseItem(pytest.Item):
    def __init__(self, *, function, case, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.case = case

    def runtest(self):
        self.function(self.case)

    def reportinfo(self):
        return self.fspath, 0, self.name


class CaseCollector(pytest.Collector):
    def __init__(self, *, function, **kwargs):
        super().__init__(**kwargs)
        self.function = function

    def collect(self):
        return [CaseItem.from_parent(self, name=f"case{n}", function=self.function, case=n)
                for n in self.function.cases]
"""


def test_pycollect_makeitem_hooks_make_the_items_of_a_modules_names(tmp_path: Path) -> None:
    """pyyaml 6.0.4: its legacy tests' conftest.py wraps ``pytest_pycollect_makeitem`` (``hookwrapper=True``)
    and forces its own answer: a ``pytest.Collector`` (``from_parent(collector, fspath=collector.fspath)``,
    the property pytest's legacypath plugin adds to every node) of one item per data file for each function
    carrying a marker attribute, None for every other name. pytest asks the hook for every name of a test
    module and of a test class; a plain hook answers before pytest's own collection (an item for a name
    pytest would not collect, ``[]`` to drop one), and a conftest.py's hook applies to the files under its
    folder. pytest 9.2: 6 passed, 1 failed."""
    files = {
        "caseitems.py": _MAKEITEM_ITEMS,
        "conftest.py": """
        import pytest

        from caseitems import CaseCollector


        @pytest.hookimpl(hookwrapper=True, trylast=True)
        def pytest_pycollect_makeitem(collector, name, obj):
            outcome = yield
            outcome.get_result()
            if getattr(obj, "cases", None) is not None:
                outcome.force_result(CaseCollector.from_parent(collector, name=name, function=obj))
            elif name.startswith("test_hidden"):
                outcome.force_result(None)
        """,
        "sub/conftest.py": """
        from caseitems import CaseItem


        def pytest_pycollect_makeitem(collector, name, obj):
            if name.startswith("check_") and callable(obj):
                return CaseItem.from_parent(collector, name=name, function=obj, case=None)
            if name == "test_dropped":
                return []
        """,
        "sub/test_cases.py": """
        def by_case(n):
            assert n != 2


        by_case.cases = [1, 2, 3]


        def check_alone(case):
            assert case is None


        def test_plain():
            pass


        def test_hidden_by_the_wrapper():
            raise AssertionError("never collected")


        def test_dropped():
            raise AssertionError("never collected")


        class TestKept:
            def test_method(self):
                pass

            def test_hidden_in_a_class(self):
                raise AssertionError("never collected")
        """,
        "test_top.py": """
        def check_not_here(case):
            raise AssertionError("the sub folder's hook does not see this file")


        def test_top():
            pass
        """,
    }
    found, output = rt_test(tmp_path, files)
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 6, "fail": 1}, pytest_output
    assert found == expected, output
    assert "(fail) by_case > case2" in output
    assert "never collected" not in output
    # the items are pytest's nodes, selected by their node ids
    found, output = rt_test(
        tmp_path, {}, "sub/test_cases.py::by_case::case3", "sub/test_cases.py::check_alone"
    )
    assert found == {"pass": 2}, output


_STRICT_MARKERS = {
    "pyproject.toml": """
    [tool.pytest.ini_options]
    addopts = "--strict-markers"
    markers = ["slow: a slow test"]
    """,
    "conftest.py": """
    def pytest_configure(config):
        config.addinivalue_line("markers", "network: registered by a conftest.py")
    """,
    "test_known.py": """
    import pytest

    @pytest.mark.slow
    @pytest.mark.network
    @pytest.mark.parametrize("x", [1, 2])
    @pytest.mark.filterwarnings("ignore")
    def test_registered(x):
        pass

    @pytest.mark.skipif(False, reason="no")
    @pytest.mark.xfail(reason="known")
    def test_builtin():
        assert False
    """,
    "test_unknown.py": """
    import pytest

    @pytest.mark.nobody_registered_this
    def test_unknown():
        pass
    """,
    "test_unknown_module_mark.py": """
    import pytest

    pytestmark = pytest.mark.trio

    def test_in_module():
        pass
    """,
}


def test_strict_markers_makes_an_unregistered_mark_a_collection_error(tmp_path: Path) -> None:
    """``--strict-markers`` in addopts (pytest 9: the ini value ``strict_markers``, or ``strict``): a test
    module using a mark neither pytest, the configuration's ``markers``, a plugin nor a conftest.py registered
    fails to collect, as pytest's ``pytest.mark`` fails it at import (httpcore 1.0.9 uses pytest-trio's
    ``trio`` mark with pytest-trio missing). rt ignored the option and ran those tests."""
    counts, output = rt_test(tmp_path, _STRICT_MARKERS, "--continue-on-collection-errors")
    expected, pytest_output = pytest_counts(tmp_path, "--continue-on-collection-errors")
    assert counts == expected == {"pass": 2, "xfail": 1, "error": 2}, (output, pytest_output)
    assert "'nobody_registered_this' not found in `markers` configuration option" in output
    lenient = {name: text for name, text in _STRICT_MARKERS.items() if name != "pyproject.toml"}
    counts, output = rt_test(tmp_path / "lenient", {**lenient, "pytest.ini": "[pytest]\n"})
    assert counts == {"pass": 4, "xfail": 1}, output
