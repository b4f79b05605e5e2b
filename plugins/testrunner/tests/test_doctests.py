"""``rt test`` collects and runs doctests as pytest does (issue 15; found on semver and voluptuous, whose
``.rst``/``.md`` examples come from ``--doctest-glob``): text files, ``--doctest-modules``, option flags,
fixtures, skips and failure reports. Most tests run pytest itself on the same small project and compare the
outcome counts, so a difference in either runner shows."""

from __future__ import annotations

import doctest
import shutil
from pathlib import Path

from rt.testing import CliResult, counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

FIXTURE = Path(__file__).parent / "fixtures" / "doctests"
Result = CliResult
project = write_files


def run_rt_test(cwd: Path, *args: str) -> Result:
    return run_cli("test", *args, cwd=cwd, timeout=180)


def counts(result: Result) -> dict[str, int]:
    return summary_counts(result.stderr)


def pytest_counts(cwd: Path, *args: str) -> dict[str, int]:
    """pytest's outcome counts on ``cwd``, in rt's words (a collection error does not stop its run, as in rt)."""
    return counts_from_pytest(run_pytest("--continue-on-collection-errors", *args, cwd=cwd).stdout)


def copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "doctests"
    shutil.copytree(FIXTURE, target)
    return target


def test_a_project_of_doctests_counts_as_pytest_counts(tmp_path: Path) -> None:
    """Text files (``--doctest-glob`` twice in addopts), ``--doctest-modules`` (a package's ``__init__.py``,
    conftest.py, a test module's own doctests, ``setup.py`` and ``__main__.py`` left out, an import error as
    a collection error), pytest's option flags, ``+SKIP``, ``pytest.skip()`` in an example, ``getfixture``,
    ``doctest_namespace`` filled by an autouse fixture, ``property`` and ``cached_property`` docstrings, a
    module imported under its real name (pickle). pytest 9.2: 12 passed, 3 failed, 2 skipped, 1 error."""
    root = copy_fixture(tmp_path)
    expected = pytest_counts(root)
    assert expected == {"pass": 12, "fail": 3, "skip": 2, "error": 1}
    result = run_rt_test(root, "--continue-on-collection-errors")
    assert counts(result) == expected, result.output
    for name in ("conftest.helper", "guide.rst", "pkg", "pkg.shapes.Point.doubled", "test_plain.doubled"):
        assert f"(pass) {name} " in result.stderr, result.output
    assert "(skip) pkg.shapes.all_skipped" in result.stderr
    assert "notes.txt" not in result.output and "test_empty.txt" not in result.output
    # the first failing example ends the doctest: one report, lines numbered as in the file
    assert "pkg/shapes.py:87: [doctest] pkg.shapes.wrong" in result.stderr, result.output
    assert "086     >>> total = 1\n087     >>> total + 1\nExpected:\n    3\nGot:\n    2" in result.stderr
    assert "never run" not in result.stderr.split("[doctest] pkg.shapes.wrong")[1].split("(fail)")[0]
    assert "UNEXPECTED EXCEPTION: KeyError('missing')" in result.stderr
    assert 'File "<doctest pkg.shapes.raises[0]>", line 1' in result.stderr
    assert "docs/test_text.txt:4: [doctest] test_text.txt" in result.stderr

    parallel = run_rt_test(root, "--parallel=2", "--continue-on-collection-errors")
    assert counts(parallel) == expected, parallel.output


def test_text_files_of_pytests_default_glob_without_any_configuration(tmp_path: Path) -> None:
    """pytest collects ``test*.txt`` files always, without ``--doctest-modules``: each file with examples is
    one test; a ``.rst`` or ``.txt`` file named on the command line is one too. pytest 9.2 counts 2 passed,
    1 failed; then 1 passed for the named file."""
    project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_intro.txt": """
        >>> greeting = "hello"
        >>> greeting.upper()
        'HELLO'
    """,
            "sub/test_wrong.txt": """
        Some prose first.

        >>> 6 * 7
        41
    """,
            "notes.txt": ">>> 1 / 0\n",
            "docs/usage.rst": ">>> sorted({3, 1})\n[1, 3]\n",
            "README.rst": "Usage\n\n    >>> 'rt'.upper()\n    'RT'\n",
            "test_code.py": "def test_code():\n    pass\n",
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 2, "fail": 1}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output
    assert "(pass) test_intro.txt" in result.stderr
    assert (
        "sub/test_wrong.txt:4: [doctest] test_wrong.txt\n001 \n002 Some prose first.\n003 \n004 >>> 6 * 7\nExpected:\n    41\nGot:\n    42"
        in (result.stderr)
    ), result.output

    named = run_rt_test(tmp_path, "docs/usage.rst")
    assert counts(named) == pytest_counts(tmp_path, "docs/usage.rst") == {"pass": 1}, named.output
    # found on natsort (its tox.ini runs `pytest README.rst docs/examples.rst`): a bare file name too
    both = run_rt_test(tmp_path, "README.rst", "docs/usage.rst")
    assert counts(both) == pytest_counts(tmp_path, "README.rst", "docs/usage.rst") == {"pass": 2}, both.output


def test_doctest_options_on_the_command_line(tmp_path: Path) -> None:
    """``--doctest-modules``, ``--doctest-glob`` (its patterns replace ``test*.txt``),
    ``--doctest-continue-on-failure`` (every failing example reported, still one failed test) and
    ``--doctest-report`` given to ``rt test``, as to pytest."""
    project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "mod.py": '''
        def f():
            """
            >>> 1 + 1
            3
            >>> print("a\\\\nb\\\\nc")
            a
            B
            c
            """
    ''',
            "README.md": "# Title\n\n>>> 2 * 2\n4\n",
            "test_default.txt": ">>> 1\n1\n",
        },
    )
    args = ("--doctest-modules", "--doctest-glob", "*.md")
    expected = pytest_counts(tmp_path, *args)
    assert expected == {"pass": 1, "fail": 1}
    first_only = run_rt_test(tmp_path, *args)
    assert counts(first_only) == expected, first_only.output
    assert "test_default.txt" not in first_only.output
    assert "Expected:\n    3\nGot:\n    2" in first_only.stderr and "B" not in first_only.stderr

    every = run_rt_test(tmp_path, *args, "--doctest-continue-on-failure")
    assert counts(every) == pytest_counts(tmp_path, *args, "--doctest-continue-on-failure") == expected
    # both failures, the second as a unified diff (pytest's default --doctest-report)
    assert "Expected:\n    3\nGot:\n    2" in every.stderr, every.output
    assert "Differences (unified diff with -expected +actual):" in every.stderr
    assert "    -B\n    +b" in every.stderr

    ndiff = run_rt_test(tmp_path, *args, "--doctest-continue-on-failure", "--doctest-report", "ndiff")
    assert "Differences (ndiff with -expected +actual):" in ndiff.stderr, ndiff.output

    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --doctest-report=fancy\n")
    named = run_rt_test(tmp_path, *args)
    assert "--doctest-report fancy (not one of udiff, cdiff, ndiff, only_first_failure, none)" in named.stderr


def test_option_flags_as_pytest_reads_them(tmp_path: Path) -> None:
    """``doctest_optionflags``: doctest's own (IGNORE_EXCEPTION_DETAIL, DONT_ACCEPT_TRUE_FOR_1) and pytest's
    (NUMBER, ALLOW_BYTES), which an example may also name inline. pytest 9.2: 3 passed, 1 failed (``True``
    is not ``1`` under DONT_ACCEPT_TRUE_FOR_1)."""
    project(
        tmp_path,
        {
            "tox.ini": """
        [pytest]
        addopts = --doctest-modules
        doctest_optionflags = IGNORE_EXCEPTION_DETAIL DONT_ACCEPT_TRUE_FOR_1
    """,
            "flags.py": '''
        def numbers():
            """
            >>> 2 / 3  # doctest: +NUMBER
            0.667
            >>> b"x"  # doctest: +ALLOW_BYTES
            'x'
            """

        def exception_detail():
            """
            >>> int("x")
            Traceback (most recent call last):
            ValueError: some other message
            """

        def true_is_not_one():
            """
            >>> 1 == 1
            1
            """

        def number_off():
            """
            >>> 2 / 3  # doctest: +NUMBER
            0.6
            """
    ''',
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 3, "fail": 1}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output
    assert "(fail) flags.true_is_not_one" in result.stderr

    (tmp_path / "tox.ini").write_text(
        "[pytest]\naddopts = --doctest-modules\ndoctest_optionflags = FLOAT_CMP\n"
    )
    unknown = run_rt_test(tmp_path)
    assert "doctest_optionflags of tox.ini: unknown flag 'FLOAT_CMP'" in unknown.stderr, unknown.output
    assert unknown.code == 2  # a collection error, as pytest's (KeyError: 'FLOAT_CMP', exit 2)


def test_fixtures_around_doctests(tmp_path: Path) -> None:
    """A doctest is set up as a pytest item: the autouse fixtures of conftest.py and of its own module, torn
    down after it; ``getfixture`` asks for any other; ``usefixtures`` of the ini applies, first (pytest makes
    them the outermost autouse fixtures, for tests too). pytest 9.2: 4 passed."""
    project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\nusefixtures = marker\n",
            "conftest.py": """
        import pytest

        EVENTS = []

        @pytest.fixture(autouse=True)
        def around(doctest_namespace):
            EVENTS.append("up")
            doctest_namespace["events"] = EVENTS
            yield
            EVENTS.append("down")

        @pytest.fixture
        def marker():
            EVENTS.append("marker")
    """,
            "lib.py": '''
        import pytest

        @pytest.fixture(autouse=True)
        def module_level(doctest_namespace):
            doctest_namespace["local"] = "from lib.py"

        def first():
            """
            >>> events
            ['marker', 'up']
            >>> local
            'from lib.py'
            >>> getfixture("tmp_path").exists()
            True
            """

        def second():
            """
            >>> events
            ['marker', 'up', 'down', 'marker', 'up']
            """
    ''',
            "test_after.py": """
        from conftest import EVENTS

        def test_torn_down():
            assert EVENTS[-3:] == ["down", "marker", "up"]

        def test_then_set_up_in_the_same_order():
            assert EVENTS[-2:] == ["marker", "up"]
    """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 4}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output


def test_encoding_import_errors_and_lazy_doctest(tmp_path: Path) -> None:
    """``doctest_encoding`` reads a text file; ``--doctest-ignore-import-errors`` skips a module that does not
    import (pytest 9.2: 1 passed, 1 skipped); without doctests, rt does not import :mod:`doctest`."""
    project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules --doctest-ignore-import-errors\n"
            "doctest_encoding = latin-1\n",
            "broken.py": "import not_a_module_anywhere\n",
        },
    )
    (tmp_path / "test_latin.txt").write_bytes(">>> len('caf\xe9')\n4\n".encode("latin-1"))
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 1, "skip": 1}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output

    plain = tmp_path / "plain"
    project(
        plain,
        {
            "pytest.ini": "[pytest]\n",
            "test_p.py": "import sys\n\ndef test_p():\n    assert 'doctest' not in sys.modules\n",
            "readme.txt": ">>> 1\n2\n",
        },
    )
    assert counts(run_rt_test(plain)) == {"pass": 1}


def test_testpaths_run_in_their_configured_order(tmp_path: Path) -> None:
    """Found on semver (``testpaths = tests docs``): pytest collects the testpaths in the order the
    configuration lists them, so the ``.rst`` doctests of docs/ run after the tests, whose conftest.py's
    autouse fixture has filled ``doctest_namespace`` by then. rt sorted every file by path and ran docs/
    first, where the names were missing. pytest 9.2: 2 passed."""
    project(
        tmp_path,
        {
            "setup.cfg": "[tool:pytest]\ntestpaths = tests docs\naddopts = --doctest-glob='*.rst'\n",
            "tests/conftest.py": """
        import pytest

        @pytest.fixture(autouse=True)
        def add_names(doctest_namespace):
            doctest_namespace["shared"] = "from the tests' conftest.py"
    """,
            "tests/test_first.py": "def test_first():\n    pass\n",
            "docs/usage.rst": '>>> shared\n"from the tests\' conftest.py"\n',
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 2}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output
    assert result.stderr.index("tests/test_first.py") < result.stderr.index("docs/usage.rst")


def test_namespace_packages_and_library_modules_as_pytest_imports_them(tmp_path: Path) -> None:
    """Found on jaraco.functools, jaraco.text and zipp (jaraco's skeleton): with ``consider_namespace_packages``
    a package inside a namespace folder imports under its full name (``nspkg.functools``; rt imported it as
    ``functools``, the standard library's name, and nothing collected); a module whose name is no identifier
    (``to-upper.py``) imports as pytest imports it, relative imports working; and the library's own modules
    keep their plain ``assert`` (pytest rewrites only test files and conftest.py files), so a doctest showing
    a bare ``AssertionError`` passes. pytest 9.2: 4 passed."""
    project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\nconsider_namespace_packages = true\n",
            "nspkg/functools/__init__.py": '''
        def chained(value):
            """
            >>> chained(1)
            Traceback (most recent call last):
            ...
            AssertionError
            """
            assert value is None

        def name():
            """
            >>> __name__
            'nspkg.functools'
            """
    ''',
            "nspkg/functools/helper.py": "LETTER = 'A'\n",
            "nspkg/functools/to-upper.py": '''
        from . import helper

        def up():
            """
            >>> up()
            'A'
            """
            return helper.LETTER
    ''',
            "test_it.py": """
        from nspkg.functools import chained

        def test_chained():
            chained(None)
    """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 4}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output
    assert "(pass) nspkg.functools.to-upper.up" in result.stderr

    # a doctest's node id, as pytest prints it, selects it
    node = "nspkg/functools/__init__.py::nspkg.functools.name"
    selected = run_rt_test(tmp_path, node)
    assert counts(selected) == pytest_counts(tmp_path, node) == {"pass": 1}, selected.output
    assert "(pass) nspkg.functools.name" in selected.stderr


def test_collection_hook_sees_doctests(tmp_path: Path) -> None:
    """A conftest.py's ``pytest_collection_modifyitems`` gets a file's doctest items too (here it marks one
    skipped by name, another by its node id), as pytest gives it every item. pytest 9.2: 1 passed,
    2 skipped."""
    project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
            "conftest.py": """
        import pytest

        def pytest_collection_modifyitems(session, config, items):
            for item in items:
                if "slow" in item.name or item.nodeid.endswith(".txt::test_heavy.txt"):
                    item.add_marker(pytest.mark.skip(reason="slow"))
    """,
            "lib.py": '''
        def slow_thing():
            """
            >>> 1 / 0
            """

        def quick_thing():
            """
            >>> 1 + 1
            2
            """
    ''',
            "test_heavy.txt": ">>> 1 / 0\n",
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 1, "skip": 2}
    result = run_rt_test(tmp_path)
    assert counts(result) == expected, result.output


def test_number_flag_compares_to_the_written_precision() -> None:
    """pytest's NUMBER: a float matches when it agrees to the decimals (or exponent) the example writes."""
    from rt_testrunner.doctest_output import NUMBER, LiteralsChecker

    checker = LiteralsChecker()
    assert checker.check_output("3.14\n", "3.14159\n", NUMBER)
    assert checker.check_output("[0.33, 1e3]\n", "[0.3333, 1000.4]\n", NUMBER)
    assert not checker.check_output("3.16\n", "3.14159\n", NUMBER)
    assert not checker.check_output("3.14\n", "3.14159\n", 0)
    assert not checker.check_output("1.0 2.0\n", "1.0\n", NUMBER)
    assert doctest.OPTIONFLAGS_BY_NAME["NUMBER"] == NUMBER
