"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 14, sweep P: serialization, dates and times, text and parsing, data validation and data-structure
libraries): each test names the suite that showed it, runs pytest itself on the same small project and
compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, run_pytest, same_counts_as_pytest, write_files


def test_a_scoped_parametrize_groups_by_value_and_remakes_its_fixtures(tmp_path: Path) -> None:
    """icalendar 7.3.2: its conftest.py's ``pytest_generate_tests`` gives ``tzp_name`` the values ``["pytz",
    "zoneinfo"]``, or ``["pytz"]`` for a test that asks for ``pytz_only``, with ``scope="module"``, and a
    module-scoped ``tzp`` fixture is built from it. rt ignored the call's ``scope`` and compared the
    parameters a wider fixture is built from by index: ``tzp`` made for "zoneinfo" (index 0 of one call) was
    kept for "pytz" (index 0 of the other), 595 set-up errors where pytest has none. pytest makes a
    pseudo-fixture of that scope for the name: the tests sharing a value run together (by value), and a
    fixture built from it is made again when the value changes. The same with ``@pytest.mark.parametrize(...,
    scope="module")``. pytest 9.2: 14 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
                import pytest

                SETUPS = []


                @pytest.fixture(scope="module")
                def provider(name):
                    SETUPS.append(name)
                    yield name
                    SETUPS.append(f"-{name}")


                @pytest.fixture
                def only_b(provider, name):
                    assert provider == "b", provider
                    return name


                def pytest_generate_tests(metafunc):
                    if "name" in metafunc.fixturenames:
                        names = ["b"] if "only_b" in metafunc.fixturenames else ["a", "b"]
                        metafunc.parametrize("name", names, scope="module")
            """,
            "test_generated.py": """
                import pytest

                from conftest import SETUPS


                @pytest.mark.parametrize("i", [1, 2])
                def test_any(i, provider, name):
                    assert provider == name


                @pytest.mark.parametrize("i", [1, 2])
                def test_b_only(i, only_b, provider):
                    assert provider == "b"


                def test_again(provider, name):
                    assert provider == name


                def test_setups_grouped_by_value():
                    assert SETUPS == ["a", "-a", "b"], SETUPS
            """,
            "test_marked.py": """
                import pytest

                MADE = []


                @pytest.fixture(scope="module")
                def server(port):
                    MADE.append(port)
                    return f"server:{port}"


                @pytest.mark.parametrize("port", [1, 2], scope="module")
                def test_first(server, port):
                    assert server == f"server:{port}"


                @pytest.mark.parametrize("port", [2, 1], scope="module")
                def test_second(server, port):
                    assert server == f"server:{port}"


                def test_made_once_per_port():
                    assert MADE == [1, 2], MADE
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "14 passed" in pytest_run.output, pytest_run.output


def test_a_fixture_returning_a_generator_has_the_generator_for_its_value(tmp_path: Path) -> None:
    """frozendict 2.5.1: its class's ``generator_seq2`` fixture returns ``(x for x in seq2)``, which its tests
    pass to ``frozendict(...)``. rt took any generator a fixture gave for a ``yield`` fixture: its first item
    was the value and the rest "yielded more than once" at teardown (4 failed, 4 errors). pytest tells a
    ``yield`` fixture by its function (a generator function), not by what it returns. pytest 9.2: 4
    passed."""
    write_files(
        tmp_path,
        {
            "test_generators.py": """
                import pytest


                @pytest.fixture
                def pairs():
                    return (x for x in [("a", 1), ("b", 2)])


                @pytest.fixture
                def yielded():
                    yield (x for x in [1, 2, 3])


                def test_returned(pairs):
                    assert dict(pairs) == {"a": 1, "b": 2}


                def test_yielded_generator(yielded):
                    assert list(yielded) == [1, 2, 3]


                class TestInClass:
                    @pytest.fixture
                    def seq(self):
                        return (n * 2 for n in range(3))

                    def test_method_fixture(self, seq):
                        assert tuple(seq) == (0, 2, 4)

                    def test_again(self, seq):
                        assert next(seq) == 0
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "4 passed" in pytest_run.output, pytest_run.output


def test_paths_in_addopts_are_where_the_run_starts(tmp_path: Path) -> None:
    """python-stdnum 2.2: its setup.cfg's ``addopts = --doctest-modules --doctest-glob="*.doctest" stdnum
    tests ...`` names the folders to run; rt ignored the paths ("paths in addopts are not read") and ran the
    doctests of every module of the project, its ``update/`` scripts among them (14 collection errors where
    pytest has 405 passed). pytest puts ``addopts`` before its command line's arguments: the run starts from
    those paths (not from ``testpaths``), and from those the command line names too; a path that does not
    exist is its usage error. An option a conftest.py registers with two values (pytest-metadata's
    ``--metadata KEY VALUE`` in parse-type 0.6.6's addopts) takes both. pytest 9.2: 3 passed, then 4
    (``other`` named too)."""
    write_files(
        tmp_path,
        {
            "setup.cfg": """
                [tool:pytest]
                addopts = --doctest-modules pkg tests --metadata KEY VALUE
                testpaths = other
            """,
            "conftest.py": """
                def pytest_addoption(parser):
                    parser.addoption("--metadata", action="append", default=[], nargs=2)
            """,
            "pkg/__init__.py": """
                def double(x):
                    '''
                    >>> double(2)
                    4
                    '''
                    return 2 * x
            """,
            "setup.py": "raise ImportError('not a test module')\n",
            "tests/test_a.py": """
                def test_a(pytestconfig):
                    assert pytestconfig.getoption("metadata") == [["KEY", "VALUE"]]
            """,
            "tests/test_b.py": "def test_b():\n    pass\n",
            "other/test_other.py": "def test_other():\n    pass\n",
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "3 passed" in pytest_run.output, pytest_run.output
    same_counts_as_pytest(tmp_path, "tests/test_a.py")
    pytest_run, _ = same_counts_as_pytest(tmp_path, "other")
    assert "4 passed" in pytest_run.output, pytest_run.output
    config = tmp_path / "setup.cfg"
    config.write_text(config.read_text().replace("pkg tests", "pkg missing"))
    pytest_run = run_pytest(cwd=tmp_path)
    rt_run = run_cli("test", cwd=tmp_path)
    assert pytest_run.code == rt_run.code == 4, (pytest_run.output, rt_run.output)
    for run in (pytest_run, rt_run):
        assert "file or directory not found: missing" in run.output, run.output


def test_a_testcase_whose_init_raises_is_a_collection_error_of_its_class(tmp_path: Path) -> None:
    """hjson 3.1.0: its ``TestAssets(unittest.TestCase)`` reads ``assets/testlist.txt`` in ``__init__``, and
    the sdist lacks the file. pytest makes an instance (``cls("runTest")``) while it collects the class, so
    the run stops with that class's collection error ("Interrupted: 1 error during collection", status 2);
    rt made instances only to run the tests: one set-up error, and the other 109 tests ran (status 1). With
    ``--continue-on-collection-errors`` the other tests run under both. pytest 9.2: 1 error, then 2
    passed, 1 error."""
    write_files(
        tmp_path,
        {
            "test_cases.py": """
                import unittest

                CREATED = []


                class TestAssets(unittest.TestCase):
                    def __init__(self, *args, **kwargs):
                        super().__init__(*args, **kwargs)
                        raise FileNotFoundError("assets/testlist.txt")

                    def test_files(self):
                        pass


                class TestCounted(unittest.TestCase):
                    def __init__(self, *args, **kwargs):
                        super().__init__(*args, **kwargs)
                        CREATED.append(self._testMethodName)

                    def test_created_at_collection_too(self):
                        assert CREATED[0] == "runTest", CREATED


                def test_plain():
                    pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert pytest_run.code == rt_run.code == 2, (pytest_run.output, rt_run.output)
    assert "1 error" in pytest_run.output, pytest_run.output
    pytest_run, _ = same_counts_as_pytest(tmp_path, "--continue-on-collection-errors")
    assert "2 passed, 1 error" in pytest_run.output, pytest_run.output


def test_a_staticmethod_test_takes_its_first_argument_as_a_fixture(tmp_path: Path) -> None:
    """bigtree 1.5.3: its test classes hold ``@staticmethod`` tests parametrized over ``"attr_name, result"``.
    rt dropped the first argument of every function of a test class, as a method's ``self``, and refused the
    parametrization ("function uses no argument 'attr_name'"), a collection error that stopped the run where
    pytest has 1339 passed. pytest keeps the arguments of a staticmethod (also one a base class defines), so
    its first one is a parameter or a fixture. pytest 9.2: 5 passed."""
    write_files(
        tmp_path,
        {
            "test_static.py": """
                import pytest


                @pytest.fixture
                def number():
                    return 3


                class Base:
                    @staticmethod
                    def test_inherited(number):
                        assert number == 3


                class TestStatic(Base):
                    @staticmethod
                    @pytest.mark.parametrize("name, size", [("a", 1), ("bb", 2)])
                    def test_parametrized(name, size):
                        assert len(name) == size

                    @staticmethod
                    def test_fixture(number, tmp_path):
                        assert number == 3 and tmp_path.is_dir()

                    def test_method(self, number):
                        assert number == 3
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "5 passed" in pytest_run.output, pytest_run.output
