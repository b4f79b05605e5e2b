"""``rt test`` counts and places collection and set-up errors as pytest 9.2 does (issue 15, session 11): a
collector's failing ``setup()``, a class whose collection fails while the rest of its module runs, and the
parametrizations pytest refuses. Each test runs pytest itself on the same small project and compares the
outcome counts and the node ids reported, so a difference in either runner shows."""

from __future__ import annotations

import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def both(root: Path, *args: str) -> tuple[dict[str, int], str, dict[str, int], str]:
    """pytest's counts and output, then ``rt test``'s, on the project in ``root``."""
    pytest_run = run_pytest(*args, cwd=root, timeout=180)
    rt_run = run_cli("test", *args, cwd=root, timeout=180)
    return (
        counts_from_pytest(pytest_run.stdout),
        pytest_run.output,
        summary_counts(rt_run.stderr),
        rt_run.output,
    )


def junit_errors(path: Path) -> list[str]:
    """The names of the test cases a JUnit file reports with an ``<error>``."""
    tree = ET.parse(path)
    return sorted(case.get("name", "") for case in tree.iter("testcase") if case.find("error") is not None)


def both_interrupted_by(root: Path, errors: int) -> None:
    """pytest and ``rt test`` on ``root`` both stop after collection with ``errors`` collection errors: the
    counts, the "Interrupted" line, exit status 2 and the JUnit file's errors."""
    pytest_run = run_pytest("--junitxml", "pytest.xml", cwd=root)
    rt_run = run_cli("test", "--junitxml", "rt.xml", cwd=root, timeout=180)
    assert counts_from_pytest(pytest_run.stdout) == {"error": errors}, pytest_run.output
    assert summary_counts(rt_run.stderr) == {"error": errors}, rt_run.output
    line = f"Interrupted: {errors} error{'s' if errors > 1 else ''} during collection"
    assert line in pytest_run.stdout, pytest_run.output
    assert line in rt_run.stderr, rt_run.output
    assert (pytest_run.code, rt_run.code) == (2, 2), rt_run.output
    assert len(junit_errors(root / "pytest.xml")) == errors
    assert len(junit_errors(root / "rt.xml")) == errors


def test_a_collectors_failing_setup_is_an_error_at_setup_of_each_of_its_items(tmp_path: Path) -> None:
    """A ``pytest.File`` subclass of a conftest.py whose ``setup()`` raises: pytest's ``SetupState`` reports
    an error at set-up of each item under it (the same exception again, the collector's ``setup()`` called
    once) and runs none of them. rt ran the collector's ``setup()`` as part of the first item's call (one
    failure) and ran the second item (a pass). pytest 9.2: 1 passed, 2 errors, in the summary and in JUnit."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            CALLS = []


            class CaseFile(pytest.File):
                def setup(self):
                    CALLS.append("setup")
                    assert len(CALLS) == 1, "setup() called again"
                    raise RuntimeError("collector setup failed")

                def collect(self):
                    for name in ("one", "two"):
                        yield CaseItem.from_parent(self, name=name)


            class CaseItem(pytest.Item):
                def runtest(self):
                    pass


            def pytest_collect_file(parent, file_path):
                if file_path.suffix == ".case":
                    return CaseFile.from_parent(parent, path=file_path)
            """,
            "test_cases.case": "one\ntwo\n",
            "test_plain.py": """
            def test_plain():
                pass
            """,
        },
    )
    expected, pytest_output, counts, output = both(tmp_path, "--junitxml", "pytest.xml")
    assert expected == {"pass": 1, "error": 2}, pytest_output
    assert counts == expected, output
    assert "error at setup: RuntimeError: collector setup failed" in output
    assert junit_errors(tmp_path / "pytest.xml") == ["one", "two"]
    run_cli("test", "--junitxml", "rt.xml", cwd=tmp_path, timeout=180)
    assert junit_errors(tmp_path / "rt.xml") == ["one", "two"]
    assert re.findall(r"ERROR test_cases.case::(\w+)", run_pytest("-rE", cwd=tmp_path).stdout) == [
        "one",
        "two",
    ]


#: one file per parametrization pytest refuses, each a collection error of its file, with pytest's message
_REFUSED = {
    "test_ids.py": (
        """
        @pytest.mark.parametrize("x", [1, 2], ids=["a", "b", "c"])
        def test_ids(x):
            pass
        """,
        "In test_ids.py::test_ids: 2 parameter sets specified, with different number of ids: 3",
    ),
    "test_arity.py": (
        """
        @pytest.mark.parametrize("x, y", [(1, 2), (1, 2, 3)])
        def test_arity(x, y):
            pass
        """,
        'test_arity.py::test_arity: in "parametrize" the number of names (2):',
    ),
    "test_duplicate.py": (
        """
        @pytest.mark.parametrize("x", [1])
        @pytest.mark.parametrize("x", [2])
        def test_duplicate(x):
            pass
        """,
        "test_duplicate.py::test_duplicate: duplicate parametrization of 'x'",
    ),
    "test_unused.py": (
        """
        @pytest.mark.parametrize("y", [1])
        def test_unused(x=3):
            pass
        """,
        "In test_unused.py::test_unused: function uses no argument 'y'",
    ),
    "test_unused_fixture.py": (
        """
        @pytest.mark.parametrize("y", [1], indirect=True)
        def test_unused():
            pass
        """,
        "In test_unused_fixture.py::test_unused: function uses no fixture 'y'",
    ),
    "test_default.py": (
        """
        @pytest.mark.parametrize("x", [1])
        def test_default(x=3):
            pass
        """,
        "In test_default.py::test_default: function already takes an argument 'x' with a default value",
    ),
    "test_indirect.py": (
        """
        @pytest.fixture
        def x(request):
            return request.param


        @pytest.mark.parametrize("x", [1], indirect=["z"])
        def test_indirect(x):
            pass
        """,
        "In test_indirect.py::test_indirect: indirect fixture 'z' doesn't exist",
    ),
    "test_request.py": (
        """
        @pytest.mark.parametrize("request", [1])
        def test_request(request):
            pass
        """,
        "test_request.py::test_request: 'request' is a reserved name and cannot be used in @pytest.mark.parametrize",
    ),
}


def test_the_parametrizations_pytest_refuses_are_collection_errors_with_its_messages(tmp_path: Path) -> None:
    """pytest refuses a ``parametrize`` whose ``ids`` differ in number from its parameter sets, a row whose
    values differ in number from the names, a name parametrized twice, a name the test does not use (or takes
    with a default value), ``indirect`` naming an unknown argument and ``request`` as a name: each is a
    collection error of the test's file. rt ran them all (made-up ids, a value for a name nobody reads).
    pytest 9.2 with ``--continue-on-collection-errors``: 3 passed (an empty ``ids`` list is allowed, as
    pytest's own special case), 1 skipped (an empty parameter set), 8 errors."""
    files = {name: f"import pytest\n{textwrap.dedent(text)}" for name, (text, _) in _REFUSED.items()}
    files["test_allowed.py"] = """
    import pytest


    @pytest.mark.parametrize("x", [1, 2], ids=[])
    def test_no_ids(x):
        pass


    @pytest.mark.parametrize("x", [])
    def test_empty(x):
        pass


    def test_plain():
        pass
    """
    write_files(tmp_path, files)
    expected, pytest_output, counts, output = both(tmp_path, "--continue-on-collection-errors")
    assert expected == {"pass": 3, "skip": 1, "error": 8}, pytest_output
    assert counts == expected, output
    for name, (_, message) in _REFUSED.items():
        assert message in pytest_output, name
        assert message in output, name


def test_empty_parameter_set_mark_decides_what_an_empty_parametrize_makes(tmp_path: Path) -> None:
    """``empty_parameter_set_mark``: ``xfail`` makes the test an expected failure that does not run,
    ``fail_at_collect`` a collection error of its file ("Empty parameter set in 'test_empty' at line 5", the
    line of its first decorator). rt skipped it whatever the ini said. pytest 9.2: 1 passed, 1 xfailed; then 1
    error (the run interrupted)."""
    write_files(
        tmp_path,
        {
            "test_empty.py": """
            import pytest


            @pytest.mark.parametrize("x", [])
            def test_empty(x):
                raise AssertionError("never runs")


            def test_plain():
                pass
            """
        },
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nempty_parameter_set_mark = xfail\n")
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"pass": 1, "xfail": 1}, pytest_output
    assert counts == expected, output
    (tmp_path / "pytest.ini").write_text("[pytest]\nempty_parameter_set_mark = fail_at_collect\n")
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"error": 1}, pytest_output
    assert counts == expected, output
    message = "Empty parameter set in 'test_empty' at line 5"
    assert message in pytest_output
    assert message in output


_CLASSES = """
import pytest


class TestGood:
    def test_one(self):
        pass


class TestBadIds:
    @pytest.mark.parametrize("x", [1, 2], ids=["a", "b", "c"])
    def test_ids(self, x):
        pass

    def test_never_collected(self):
        pass


class TestOuter:
    class TestHelper:
        def __init__(self):
            pass

    def test_outer(self):
        pass


class TestGenerator:
    @pytest.mark.parametrize("x", (i for i in range(2)))
    def test_generated(self, x):
        pass


def test_function():
    pass
"""


def test_a_class_whose_collection_fails_is_one_error_and_the_rest_of_its_module_runs(tmp_path: Path) -> None:
    """pytest collects each test class on its own: a class whose collection fails (a ``parametrize`` it
    refuses on one method; under ``filterwarnings = error`` a nested class with an ``__init__``, or a
    generator given to ``parametrize``) is one collection error named by the class's node id, and the other
    classes and functions of its module are collected. rt made the whole file one error (or, for the refused
    ids, ran the tests). pytest 9.2: 3 errors, the run interrupted; with ``--continue-on-collection-errors``
    3 passed, 3 errors (``TestBadIds``, ``TestOuter::TestHelper``, ``TestGenerator``)."""
    write_files(tmp_path, {"pytest.ini": "[pytest]\nfilterwarnings = error\n", "test_classes.py": _CLASSES})
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"error": 3}, pytest_output
    assert counts == expected, output
    assert "Interrupted: 3 errors during collection" in output
    expected, pytest_output, counts, output = both(tmp_path, "--continue-on-collection-errors")
    assert expected == {"pass": 3, "error": 3}, pytest_output
    assert counts == expected, output
    failed = ["TestBadIds", "TestOuter::TestHelper", "TestGenerator"]
    for node in failed:
        assert f"ERROR test_classes.py::{node} - " in pytest_output
    rt_run = run_cli(
        "test", "--continue-on-collection-errors", "--junitxml", "rt.xml", cwd=tmp_path, timeout=180
    )
    for node in failed:
        assert f"(error) {node.replace('::', ' > ')} " in rt_run.stderr, rt_run.output
    assert junit_errors(tmp_path / "rt.xml") == ["TestBadIds", "TestGenerator", "TestHelper"]
    pytest_listed = run_pytest("--co", "-q", cwd=tmp_path, timeout=180)
    rt_listed = run_cli("test", "--co", cwd=tmp_path, timeout=180)
    assert "3 tests collected, 3 errors" in pytest_listed.stdout
    assert "3 tests collected, 3 errors" in rt_listed.stdout, rt_listed.output
    assert rt_listed.code == pytest_listed.code == 2


def test_a_node_id_of_another_class_leaves_a_failing_class_uncollected(tmp_path: Path) -> None:
    """A node id on the command line: pytest collects only the class it names, so another class's collection
    error is not seen. pytest 9.2: 1 passed."""
    write_files(tmp_path, {"pytest.ini": "[pytest]\nfilterwarnings = error\n", "test_classes.py": _CLASSES})
    expected, pytest_output, counts, output = both(tmp_path, "test_classes.py::TestGood")
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output


def test_a_conftest_collectors_failing_sub_collector_is_one_error_and_its_siblings_run(
    tmp_path: Path,
) -> None:
    """A conftest.py's ``pytest.File`` whose ``collect()`` yields ``pytest.Collector`` nodes (one per section
    of a case file): a section whose ``collect()`` raises is one collection error named by its node id, a
    section that calls ``pytest.skip`` is one skip, and the other sections' items run. rt made the whole file
    one error. pytest 9.2 with ``--continue-on-collection-errors``: 4 passed, 1 skipped, 1 error."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            class CaseFile(pytest.File):
                def collect(self):
                    for section in self.path.read_text().split("---"):
                        lines = section.strip().splitlines()
                        yield Section.from_parent(self, name=lines[0], cases=lines[1:])


            class Section(pytest.Collector):
                def __init__(self, *, cases, **kwargs):
                    super().__init__(**kwargs)
                    self.cases = cases

                def collect(self):
                    if self.name == "broken":
                        raise ValueError(f"cannot read section {self.name}")
                    if self.name == "skipped":
                        pytest.skip("section skipped")
                    for case in self.cases:
                        yield CaseItem.from_parent(self, name=case)


            class CaseItem(pytest.Item):
                def runtest(self):
                    pass


            def pytest_collect_file(parent, file_path):
                if file_path.suffix == ".case":
                    return CaseFile.from_parent(parent, path=file_path)
            """,
            "test_sections.case": "good\na\nb\n---\nbroken\nc\n---\nskipped\nd\n---\nmore\ne\n",
            "test_plain.py": """
            def test_plain():
                pass
            """,
        },
    )
    expected, pytest_output, counts, output = both(tmp_path, "--continue-on-collection-errors")
    assert expected == {"pass": 4, "skip": 1, "error": 1}, pytest_output
    assert counts == expected, output
    assert "ERROR test_sections.case::broken - ValueError: cannot read section broken" in pytest_output
    assert "(error) broken" in output


def test_what_pytest_takes_for_a_test_function_or_class_beyond_the_name_patterns(tmp_path: Path) -> None:
    """pytest's ``pytest_pycollect_makeitem``: a ``functools.partial`` of a function named as a test runs, a
    function or class marked ``__test__ = True`` (nose's ``istest``) is a test whatever its name, an abstract
    ``Test*`` class is not collected (its concrete subclass is), another callable named as a test is left out
    with a ``PytestCollectionWarning`` ("cannot collect 'test_callable' because it is not a function"), and a
    test function that is a generator is refused: a collection error of its module, or of its class. rt saw
    only plain functions, collected the abstract class, and passed the generators without running them.
    pytest 9.2 with ``--continue-on-collection-errors`` (syrupy, when installed, cannot report a partial):
    6 passed, 2 errors, 1 warning."""
    write_files(
        tmp_path,
        {
            "test_kinds.py": """
            import abc
            import functools


            def _helper(x=0):
                assert x == 1


            test_partial = functools.partial(_helper, 1)


            class Callable:
                def __call__(self):
                    raise AssertionError("not a test")


            test_callable = Callable()


            def check_marked():
                pass


            check_marked.__test__ = True


            class Checks:
                __test__ = True

                def test_in_marked_class(self):
                    pass


            class TestAbstract(abc.ABC):
                @abc.abstractmethod
                def make(self): ...

                def test_made(self):
                    assert self.make() == 1


            class TestConcrete(TestAbstract):
                def make(self):
                    return 1


            def test_plain():
                pass
            """,
            "test_generator.py": """
            def test_generator():
                yield 1


            def test_other():
                pass
            """,
            "test_generator_method.py": """
            class TestGenerator:
                def test_generator(self):
                    yield 1


            class TestFine:
                def test_fine(self):
                    pass
            """,
        },
    )
    args = ("-p", "no:syrupy", "--continue-on-collection-errors")
    expected, pytest_output, counts, output = both(tmp_path, *args)
    assert expected == {"pass": 6, "error": 2}, pytest_output
    assert counts == expected, output
    assert "1 warning" in pytest_output
    assert re.search(r"^ 1 warning$", output, re.MULTILINE), output
    for node in ("test_partial", "check_marked", "Checks::test_in_marked_class", "TestConcrete::test_made"):
        assert f"PASSED test_kinds.py::{node}" in run_pytest("-rA", *args, cwd=tmp_path).stdout
    message = "'yield' keyword is allowed in fixtures, but not in tests (test_generator)"
    assert message in pytest_output
    assert message in output
    assert "(error) TestGenerator" in output


def test_collect_imported_tests_false_leaves_out_what_a_test_module_imports(tmp_path: Path) -> None:
    """``collect_imported_tests = false`` (pytest 8.4+): the test functions and classes a test module imports
    from another module are not collected there (by default they are, once more). rt collected them either
    way. pytest 9.2: 3 passed by default, 1 passed with the option."""
    write_files(
        tmp_path,
        {
            "shared_tests.py": """
            def test_shared():
                pass


            class TestShared:
                def test_method(self):
                    pass
            """,
            "test_imports.py": """
            from shared_tests import TestShared, test_shared


            def test_own():
                pass
            """,
        },
    )
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"pass": 3}, pytest_output
    assert counts == expected, output
    (tmp_path / "pytest.ini").write_text("[pytest]\ncollect_imported_tests = false\n")
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output


_FAILING_COLLECTORS = """
import pytest


class CaseFile(pytest.File):
    def collect(self):
        if self.path.stem.endswith("broken"):
            raise ValueError(f"cannot read {self.path.name}")
        yield Section.from_parent(self, name="good")
        yield Section.from_parent(self, name="bad")


class Section(pytest.Collector):
    def collect(self):
        if self.name == "bad" and "sections" in self.path.name:
            raise ValueError("cannot read section bad")
        yield SectionItem.from_parent(self, name="one")


class SectionItem(pytest.Item):
    def runtest(self):
        pass


def pytest_collect_file(parent, file_path):
    if file_path.name.startswith("test_") and file_path.suffix == ".case":
        return CaseFile.from_parent(parent, path=file_path)
"""


def test_a_conftest_collector_that_fails_stops_the_run_as_a_module_that_does_not_import(
    tmp_path: Path,
) -> None:
    """A conftest.py's ``pytest.File`` whose ``collect()`` raises, and one whose sub-collector's ``collect()``
    raises, are collection errors as a test module's import error is: pytest runs no test, says
    "Interrupted: 2 errors during collection" and exits 2 (JUnit: the 2 errors). rt reported both errors
    and ran the other tests (status 1). pytest 9.2: 2 errors; with ``--continue-on-collection-errors``
    4 passed, 2 errors."""
    write_files(
        tmp_path,
        {
            "conftest.py": _FAILING_COLLECTORS,
            "test_broken.case": "",
            "test_sections.case": "",
            "test_fine.case": "",
            "test_plain.py": """
            def test_plain():
                pass
            """,
        },
    )
    both_interrupted_by(tmp_path, errors=2)
    expected, pytest_output, counts, output = both(tmp_path, "--continue-on-collection-errors")
    assert expected == {"pass": 4, "error": 2}, pytest_output
    assert counts == expected, output


def test_a_test_module_that_does_not_import_stops_the_run_with_pytests_status_and_junit(
    tmp_path: Path,
) -> None:
    """A plain test module's import error: no test runs, "Interrupted: 1 error during collection", exit
    status 2 and one error in the JUnit file, under both runners. pytest 9.2: 1 error."""
    write_files(
        tmp_path,
        {
            "test_plain.py": """
            def test_plain():
                pass
            """,
            "test_missing.py": """
            import a_module_nobody_installed


            def test_never():
                pass
            """,
        },
    )
    both_interrupted_by(tmp_path, errors=1)


_SAME_BASENAMES = {
    "tests/unit/test_models.py": """
    def test_unit():
        pass
    """,
    "tests/integration/test_models.py": """
    def test_integration():
        pass
    """,
    "tests/test_other.py": """
    def test_other():
        pass
    """,
}


def test_test_files_of_one_basename_outside_packages_are_pytests_import_file_mismatch(tmp_path: Path) -> None:
    """Two test files named ``test_models.py`` in folders without ``__init__.py``: under pytest's default
    "prepend" import mode (and "append") both are the module ``test_models``, and the second is the collection
    error "import file mismatch", which stops the run. rt imported the second in the first's place and ran
    both. Under ``--import-mode=importlib`` pytest names each module by its path and runs both. pytest 9.2:
    1 error (status 2); importlib: 3 passed."""
    write_files(tmp_path, _SAME_BASENAMES)
    pytest_run = run_pytest(cwd=tmp_path)
    rt_run = run_cli("test", cwd=tmp_path, timeout=180)
    assert counts_from_pytest(pytest_run.stdout) == {"error": 1}, pytest_run.output
    assert summary_counts(rt_run.stderr) == {"error": 1}, rt_run.output
    assert "ERROR tests/unit/test_models.py" in pytest_run.stdout
    assert "tests/unit/test_models.py:" in rt_run.stderr and "import file mismatch" in rt_run.stderr
    assert (pytest_run.code, rt_run.code) == (2, 2), rt_run.output
    expected, pytest_output, counts, output = both(tmp_path, "--import-mode=append")
    assert expected == {"error": 1}, pytest_output
    assert counts == expected, output
    expected, pytest_output, counts, output = both(tmp_path, "--import-mode=importlib")
    assert expected == {"pass": 3}, pytest_output
    assert counts == expected, output
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = --import-mode=importlib\n"})
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"pass": 3}, pytest_output
    assert counts == expected, output
