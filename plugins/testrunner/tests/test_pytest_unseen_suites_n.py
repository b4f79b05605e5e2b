"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 13, sweep N: doctests, Hypothesis, unittest-heavy, warnings- and capture-heavy suites): each test
names the suite that showed it, runs pytest itself on the same small project and compares the outcome
counts, so a difference in either runner shows."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rt.testing import run_cli, run_pytest, same_counts_as_pytest, summary_counts, write_files

#: a ``src`` layout whose package is not installed: only importing one of its own modules (a doctest module
#: under ``--doctest-modules``) puts ``src`` on sys.path, as pytest's default import mode inserts a
#: package's base folder
SRC_LAYOUT_WITH_DOCTESTS = {
    "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
    "src/pkg/__init__.py": '''
        def answer():
            """
            >>> answer()
            42
            """
            return 42
    ''',
    "tests/test_answer.py": """
        from pkg import answer

        def test_answer():
            assert answer() == 42
    """,
}


def test_paths_on_the_command_line_are_collected_in_their_order(tmp_path: Path) -> None:
    """license-expression 30.4.4 (``--doctest-modules`` in its addopts, its package under ``src``, not
    installed): ``pytest tests src`` imports the test modules first, which cannot import the package yet,
    and then ``src``'s modules, which put ``src`` on sys.path: 4 collection errors. rt sorted every file by
    its path, imported ``src`` first, and ran the 188 tests. pytest 9.2: 1 error (the test module) and the
    doctest passing with ``tests src``, 2 passed with ``src tests``."""
    write_files(tmp_path, SRC_LAYOUT_WITH_DOCTESTS)
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "tests", "src")
    assert "No module named 'pkg'" in rt_run.output, rt_run.output
    same_counts_as_pytest(tmp_path, "src", "tests")
    # files named one by one keep their order too
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "tests/test_answer.py", "src/pkg/__init__.py")
    assert "No module named 'pkg'" in rt_run.output, rt_run.output


#: pygments 2.21.0's golden-file collectors: an item per data file, its expected output next to it
GOLDEN_FILE_COLLECTOR = """
    import pytest

    class GoldenItem(pytest.Item):
        def runtest(self):
            expected = self.path.with_name(self.path.name + ".output")
            assert not expected.exists() or expected.read_text() == self.path.read_text().upper()

    class GoldenFile(pytest.File):
        def collect(self):
            yield GoldenItem.from_parent(self, name="")
"""


def golden_collector(hook: str) -> str:
    """A conftest.py: :data:`GOLDEN_FILE_COLLECTOR` and ``hook``, its ``pytest_collect_file``."""
    return textwrap.dedent(GOLDEN_FILE_COLLECTOR) + textwrap.dedent(hook)


def test_a_collect_file_hook_that_names_the_suffixes_it_leaves_out(tmp_path: Path) -> None:
    """pygments 2.21.0: tests/examplefiles/conftest.py collects every file but ``.output`` ones and itself
    (``if file_path.suffix != '.output' and file_path.name != 'conftest.py'``). rt hands a conftest.py's
    ``pytest_collect_file`` only the files of the suffixes its source names, here ``.output`` and ``.py``:
    the lexers' example files (``.abnf``, ``.adb`` ...) were never collected, 4661 passed where pytest
    counts 5330. A hook that returns early for the suffixes it does not take takes every other file too;
    one that returns early for all but one suffix still takes that one. pytest 9.2: 4 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "examplefiles/conftest.py": golden_collector(
                """
                def pytest_collect_file(parent, file_path):
                    if file_path.suffix != ".output" and file_path.name != "conftest.py":
                        return GoldenFile.from_parent(parent, path=file_path)
            """
            ),
            "examplefiles/abnf/example.abnf": "rule = a\n",
            "examplefiles/abnf/example.abnf.output": "RULE = A\n",
            "examplefiles/ada/test.adb": "begin\n",
            "early/conftest.py": golden_collector(
                """
                def pytest_collect_file(parent, file_path):
                    if file_path.suffix in (".output", ".py"):
                        return None
                    return GoldenFile.from_parent(parent, path=file_path)
            """
            ),
            "early/data.sv": "module m;\n",
            "early/data.sv.output": "MODULE M;\n",
            "only_yaml/conftest.py": golden_collector(
                """
                def pytest_collect_file(parent, file_path):
                    if file_path.suffix != ".yaml":
                        return
                    return GoldenFile.from_parent(parent, path=file_path)
            """
            ),
            "only_yaml/case.yaml": "a: 1\n",
            "only_yaml/other.json": "{}\n",
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "4 passed" in pytest_run.stdout, pytest_run.output


def test_a_text_file_of_the_doctest_glob_claimed_by_a_conftest(tmp_path: Path) -> None:
    """pygments 2.21.0: tests/snippets/systemverilog/test_operators.txt matches pytest's default doctest
    glob (``test*.txt``) and holds ``<<< >>>`` (SystemVerilog's shift operators), which is no doctest
    example: pytest's doctest plugin collects nothing from it, and the snippets' conftest.py collects its
    golden test. rt took any ``>>>`` for an example and the file for a doctest file alone, so the
    conftest.py's hook never saw it: 1 test missing. A text file with a real example is collected by both, the
    conftest.py's items first. pytest 9.2: 2 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "snippets/conftest.py": golden_collector(
                """
                def pytest_collect_file(parent, file_path):
                    if file_path.suffix == ".txt":
                        return GoldenFile.from_parent(parent, path=file_path)
            """
            ),
            "snippets/test_operators.txt": "<< >> <<< >>>\n",
            "snippets/test_operators.txt.output": "<< >> <<< >>>\n",
            "snippets/test_doc.txt": "a doctest\n\n    >>> 1 + 1\n    3\n",
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "1 failed, 2 passed" in pytest_run.stdout, pytest_run.output


def test_a_unittest_tests_second_error_is_its_teardown_error(tmp_path: Path) -> None:
    """zope.deprecation 6.0: tests that fail, after which their ``tearDown`` raises ``KeyError`` (it deletes
    what the failed test never set). pytest's unittest plugin keeps each outcome unittest reports, in order,
    and gives the call phase the first and the teardown phase the second: 1 failed and 1 error ("ERROR at
    teardown of"); a third is dropped. rt kept only the first: 14 failed where pytest counts 14 failed and 3
    errors. pytest 9.2: 4 failed, 1 passed, 1 skipped, 3 errors (an expected failure whose tearDown fails is a
    failure, as unittest reports it)."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_teardowns.py": """
                import unittest

                class TestTearDownFails(unittest.TestCase):
                    def tearDown(self):
                        raise KeyError("abc")

                    def test_fails(self):
                        self.fail("first")

                    def test_passes(self):
                        pass

                    def test_fails_with_a_failing_cleanup(self):
                        self.addCleanup(lambda: 1 / 0)
                        assert False

                    @unittest.expectedFailure
                    def test_expected_failure(self):
                        assert False

                    def test_skipped(self):
                        self.skipTest("not here")

                class TestFine(unittest.TestCase):
                    def test_plain(self):
                        pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "4 failed, 1 passed, 1 skipped, 3 errors" in pytest_run.stdout, pytest_run.output
    assert "KeyError" in rt_run.output, rt_run.output


def test_an_initial_conftest_that_fails_to_import_stops_the_run(tmp_path: Path) -> None:
    """cssutils 2.15.0 without its dependency encutils: its conftest.py at the root imports the package,
    which fails. pytest loads its initial conftest.py files (the rootdir's, those of the paths given and
    their ``test*`` subfolders) before collecting, and one that fails to import is its usage error, "ImportError
    while loading conftest", status 4, no test collected; rt counted 1 collection error, status 2. A
    conftest.py met later while collecting (a subfolder's, run from the rootdir) is still a collection
    error of its folder under both: pytest 9.2: 1 passed, 1 error."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "conftest.py": "import not_installed_dependency\n",
            "test_one.py": "def test_one():\n    pass\n",
            "later/pytest.ini": "[pytest]\n",
            "later/test_fine.py": "def test_fine():\n    pass\n",
            "later/pkg/conftest.py": "import not_installed_dependency\n",
            "later/pkg/test_below.py": "def test_below():\n    pass\n",
        },
    )
    pytest_run = run_pytest(cwd=tmp_path)
    rt_run = run_cli("test", cwd=tmp_path)
    assert pytest_run.code == 4, pytest_run.output
    assert "ImportError while loading conftest" in pytest_run.output, pytest_run.output
    assert rt_run.code == 4, rt_run.output
    assert "ImportError while loading conftest" in rt_run.output, rt_run.output
    assert "No module named 'not_installed_dependency'" in rt_run.output, rt_run.output
    assert summary_counts(rt_run.stderr) == {}, rt_run.output
    same_counts_as_pytest(tmp_path / "later")


def test_initial_conftests_are_imported_before_the_plugins_are_configured(tmp_path: Path) -> None:
    """bidict at its GitHub head (0.23.x): tests/conftest.py registers the Hypothesis profile
    ``less-examples``, and its addopts say ``--hypothesis-profile=less-examples``, which Hypothesis's plugin
    loads in its ``pytest_configure``. pytest imports its initial conftest.py files (testpaths' folders here)
    before it configures the plugins; rt imported a conftest.py when the collection reached its folder, after,
    so the profile was missing: Hypothesis's ``load_profile`` failed and the conftest.py's
    ``register_profile`` then raised ``KeyError``, and no test ran. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --hypothesis-profile=few\ntestpaths = tests\n",
            "tests/conftest.py": """
                from hypothesis import settings

                settings.register_profile("few", max_examples=7)
            """,
            "tests/test_profile.py": """
                from hypothesis import given, settings, strategies as st

                calls = []

                @given(st.integers())
                def test_examples(n):
                    calls.append(n)

                def test_the_profile_was_loaded():
                    assert settings.get_current_profile_name() == "few"
                    assert settings.default.max_examples == 7
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "2 passed" in pytest_run.stdout, pytest_run.output
