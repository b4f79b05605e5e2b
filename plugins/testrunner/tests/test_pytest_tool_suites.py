"""``rt test`` on mechanisms found missing while running testing tools' and pytest plugins' own suites from
their PyPI sdists (issue 15, session 10, sweep I): each test names the suite that showed it, runs pytest
itself on the same small project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: pytest's hint replaces the full diff of two containers only off CI: both runners see no CI
NO_CI = {"BUILD_NUMBER": ""}


def rt_test(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """``rt test`` in ``root``: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=root, env=NO_CI, timeout=180)
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str) -> dict[str, int]:
    """pytest's outcome counts in ``root``, in rt's words."""
    return counts_from_pytest(run_pytest(*args, cwd=root, env=NO_CI).stdout)


GENERATED = """
import pytest

def cases():
    yield from range(3)

@pytest.mark.parametrize("n", (n for n in cases()))
def test_from_a_generator(n):
    assert n < 3

@pytest.mark.parametrize("n", map(int, "12"))
def test_from_map(n):
    assert n

@pytest.mark.parametrize("n", range(2))
def test_from_a_range(n):
    assert n < 2
"""


def test_parametrize_over_a_generator_warns_while_collecting(tmp_path: Path) -> None:
    """dirty-equals 0.11: ``parametrize`` over a generator, with ``filterwarnings = "error"``. pytest 9
    deprecates argvalues that are no ``Collection`` and warns while collecting, so the warning, an error
    there, is a collection error of the module (the run interrupted); a ``range`` is a collection. Without
    the filter the tests run. pytest 9.2: 1 error; 7 passed."""
    write_files(
        tmp_path,
        {
            "strict/pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = "error"\n',
            "strict/tests/test_gen.py": GENERATED,
            "strict/tests/test_other.py": "def test_fine():\n    pass\n",
            "lenient/pyproject.toml": "[tool.pytest.ini_options]\n",
            "lenient/tests/test_gen.py": GENERATED,
        },
    )
    strict = tmp_path / "strict"
    expected = pytest_counts(strict)
    assert expected == {"error": 1}
    found, output = rt_test(strict)
    assert found == expected, output
    assert "Test: tests/test_gen.py::test_from_a_generator, argvalues type: generator" in output
    lenient = tmp_path / "lenient"
    expected = pytest_counts(lenient)
    assert expected == {"pass": 7}
    found, output = rt_test(lenient)
    assert found == expected, output


def test_code_loaded_through_pytests_rewriting_hook_with_the_sessions_config(tmp_path: Path) -> None:
    """dirty-equals 0.11 (pytest-examples): each documentation example is loaded through pytest's own
    ``AssertionRewritingHook(config)`` made with the session's config, which reads pytest's assertion state
    from ``config.stash`` when it imports (rt's config had none: a ``KeyError`` per example). pytest 9.2: 1
    passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "tests/test_examples.py": """
            import importlib.util

            import pytest
            from _pytest.assertion.rewrite import AssertionRewritingHook

            def run_example(config, folder, source):
                path = folder / "example_code.py"
                path.write_text(source)
                loader = AssertionRewritingHook(config=config)
                loader.mark_rewrite("example_code")
                spec = importlib.util.spec_from_file_location("example_code", str(path), loader=loader)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module

            def test_a_passing_example(pytestconfig, tmp_path):
                assert run_example(pytestconfig, tmp_path, "x = 1\\nassert x == 1\\n").x == 1

            def test_a_failing_example_shows_its_values(pytestconfig, tmp_path):
                with pytest.raises(AssertionError) as info:
                    run_example(pytestconfig, tmp_path, "x = [1]\\nassert len(x) == 2\\n")
                assert "assert 1 == 2" in str(info.value)
                assert 0, "fails"
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 1, "fail": 1}
    found, output = rt_test(tmp_path)
    assert found == expected, output
    assert "KeyError" not in output


def test_a_pytest_run_inside_the_session_sees_the_plugins_as_rewritten(tmp_path: Path) -> None:
    """pytest-check 3.0.3: its tests run pytest in-process (pytester) and match the summary line,
    ``fnmatch_lines(["* 2 failed *"])``. That inner pytest marks the installed plugins' packages for rewriting
    and warns about each one already imported by another loader than its own: under rt (which imports them,
    or imported anyio before the suite) every such run said ``2 failed, 2 warnings in``. pytest 9.2: 1
    passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "conftest.py": 'pytest_plugins = ["pytester"]\n',
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "tests/test_inner.py": """
            def test_inner_run_warns_of_nothing(pytester):
                pytester.makepyfile("def test_a():\\n    assert 0\\n")
                result = pytester.runpytest("-p", "no:cacheprovider")
                result.assert_outcomes(failed=1, warnings=0)
                result.stdout.fnmatch_lines(["* 1 failed in *"])

            def test_fails(pytester):
                pytester.makepyfile("def test_a():\\n    pass\\n")
                pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 1, "fail": 1}
    found, output = rt_test(tmp_path)
    assert found == expected, output


def test_custom_items_that_request_fixtures_and_files_that_set_up(tmp_path: Path) -> None:
    """testfixtures 12.4.0 (sybil): a conftest.py's ``pytest_collect_file`` returns a ``pytest.File`` whose
    ``setup()`` prepares a namespace its items share and whose ``teardown()`` cleans it, once for the file (pytest's
    ``SetupState``); each item requests fixtures as pytest's ``Function`` does when made
    (``session._fixturemanager.getfixtureclosure``, ``FuncFixtureInfo``, ``TopRequest``) and reads them in its
    ``setup()`` after ``_request._fillfixtures()``. A plain ``pytest.Item`` gets no fixtures, autouse ones
    included. Before: each such item failed (no ``_fixturemanager``). pytest 9.2: 3 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "conftest.py": """
            import pytest
            from _pytest import fixtures
            from _pytest.fixtures import FuncFixtureInfo

            EVENTS = []

            @pytest.fixture
            def greeting(word):
                return "hello " + word

            @pytest.fixture
            def word():
                return "world"

            @pytest.fixture(autouse=True)
            def count_autouse():
                EVENTS.append("autouse")

            class CaseItem(pytest.Item):
                def __init__(self, *, expected, wanted, **kwargs):
                    super().__init__(**kwargs)
                    self.expected = expected
                    self.funcargs = {}
                    if wanted:
                        manager = self.session._fixturemanager
                        closure, defs = manager.getfixtureclosure(
                            initialnames=wanted, parentnode=self, ignore_args=set())
                        self._fixtureinfo = FuncFixtureInfo(
                            argnames=wanted, initialnames=wanted, names_closure=closure, name2fixturedefs=defs)
                        self._request = fixtures.TopRequest(pyfuncitem=self, _ispytest=True)
                        self.fixturenames = closure

                def setup(self):
                    if hasattr(self, "_request"):
                        self._request._fillfixtures()

                def runtest(self):
                    shared = self.parent.namespace
                    got = self.funcargs.get("greeting", shared["value"])
                    assert got == self.expected, got
                    assert self.parent.set_up == 1

            class CaseFile(pytest.File):
                set_up = 0

                def collect(self):
                    for number, line in enumerate(self.path.read_text().splitlines()):
                        wanted, _, expected = line.partition(":")
                        yield CaseItem.from_parent(
                            self, name=f"case{number}", expected=expected, wanted=wanted.split())

                def setup(self):
                    type(self).set_up += 1
                    self.namespace = {"value": "shared"}
                    EVENTS.append("file setup")

                def teardown(self):
                    EVENTS.append("file teardown")
                    del self.namespace

            def pytest_collect_file(file_path, parent):
                if file_path.suffix == ".cases":
                    return CaseFile.from_parent(parent, path=file_path)
            """,
            "tests/one.cases": "greeting:hello world\n:shared\ngreeting:hello there\n",
            "tests/test_after.py": """
            import conftest

            def test_after_the_cases():
                assert conftest.EVENTS.count("file setup") == 1
                assert conftest.EVENTS.count("file teardown") == 1
                # the autouse fixture: for the items that requested fixtures and for this test only
                assert conftest.EVENTS.count("autouse") == 1
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 3, "fail": 1}
    found, output = rt_test(tmp_path)
    assert found == expected, output
