"""``rt test``'s exit status: pytest's for a pytest suite, the reference runtime's for the spec's tests.

Each case writes a small project, runs ``rt test`` on it and, for a pytest suite, pytest too: the status must
be the one pytest exits with (0 ok, 1 tests failed, 2 interrupted or collection errors, 5 no tests collected,
N from ``pytest.exit(msg, returncode=N)``). rt_testrunner/exit_status.py says where each rule applies.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import run_cli, run_pytest, write_files
from rt_testrunner.discovery import TestFile
from rt_testrunner.exit_status import exit_status, is_pytest_suite
from rt_testrunner.pyconfig import load

#: (name, files, pytest's exit status on them)
PYTEST_SUITES = [
    ("passed", {"test_a.py": "def test_a():\n    pass\n"}, 0),
    ("failed", {"test_a.py": "def test_a():\n    assert 0\n"}, 1),
    (
        "fixture error",
        {
            "test_a.py": "import pytest\n\n@pytest.fixture\ndef f():\n    raise RuntimeError\n\ndef test_a(f):\n    pass\n"
        },
        1,
    ),
    (
        "collection error",
        {"test_a.py": "import a_module_nobody_installed\n", "test_b.py": "def test_b():\n    pass\n"},
        2,
    ),
    (
        "a conftest.py below the rootdir that fails",
        {
            "sub/conftest.py": "raise RuntimeError('broken')\n",
            "sub/test_a.py": "def test_a():\n    pass\n",
            "test_b.py": "def test_b():\n    pass\n",
        },
        2,
    ),
    (
        "KeyboardInterrupt",
        {"test_a.py": "def test_a():\n    raise KeyboardInterrupt\n\ndef test_b():\n    pass\n"},
        2,
    ),
    (
        "pytest.exit",
        {"test_a.py": "import pytest\n\ndef test_a():\n    pytest.exit('stop')\n\ndef test_b():\n    pass\n"},
        2,
    ),
    (
        "pytest.exit with a returncode",
        {"test_a.py": "import pytest\n\ndef test_a():\n    pytest.exit('stop', returncode=3)\n"},
        3,
    ),
    (
        "pytest.exit with returncode 0 after a failure",
        {
            "test_a.py": "import pytest\n\ndef test_a():\n    assert 0\n\n"
            "def test_b():\n    pytest.exit('stop', returncode=0)\n"
        },
        0,
    ),
    (
        "pytest.exit in a fixture",
        {
            "test_a.py": "import pytest\n\n@pytest.fixture\ndef f():\n    pytest.exit('stop', returncode=4)\n\n"
            "def test_a(f):\n    pass\n"
        },
        4,
    ),
    (
        "pytest.exit at import is a collection error",
        {"test_a.py": "import pytest\n\npytest.exit('stop', returncode=7)\n"},
        2,
    ),
    ("no tests in the files", {"conftest.py": "", "test_a.py": "X = 1\n"}, 5),
    ("no test files", {"pytest.ini": "[pytest]\n"}, 5),
    ("only skipped", {"test_a.py": "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n"}, 0),
]


@pytest.mark.parametrize(
    ("files", "expected"), [case[1:] for case in PYTEST_SUITES], ids=[c[0] for c in PYTEST_SUITES]
)
def test_a_pytest_suite_exits_as_pytest(tmp_path: Path, files: dict[str, str], expected: int) -> None:
    write_files(tmp_path, files)
    found = run_cli("test", cwd=tmp_path)
    assert run_pytest(cwd=tmp_path).code == expected
    assert found.code == expected, found.output


def test_deselecting_every_test_exits_5(tmp_path: Path) -> None:
    """``-k`` (or ``-m``) that leaves no test: pytest's "no tests collected" (5), with rt's message."""
    write_files(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    assert run_pytest("-k", "nothing", cwd=tmp_path).code == 5
    found = run_cli("test", "-k", "nothing", cwd=tmp_path)
    assert found.code == 5, found.output
    assert "No tests matched the filters" in found.stderr


def test_sessionfinish_hooks_get_pytests_status(tmp_path: Path) -> None:
    """``pytest_sessionfinish(session, exitstatus)`` gets the status the run ends with (2 after a
    KeyboardInterrupt, as pytest's)."""
    write_files(
        tmp_path,
        {
            "conftest.py": "def pytest_sessionfinish(session, exitstatus):\n    print('EXITSTATUS', int(exitstatus))\n",
            "test_a.py": "def test_a():\n    raise KeyboardInterrupt\n",
        },
    )
    found = run_cli("test", cwd=tmp_path)
    assert "EXITSTATUS 2" in found.output
    assert found.code == 2


#: (name, files, the reference runtime's exit status): the spec's patterns, no pytest configuration
SPEC_PROJECTS = [
    ("passed", {"a_test.py": "from rt.test import test\n\ntest('a', lambda: None)\n"}, 0),
    (
        "a file that fails to load",
        {"a_test.py": "import a_module_nobody_installed\n", "b_test.py": "def test_b():\n    pass\n"},
        1,
    ),
    ("KeyboardInterrupt", {"a_test.py": "def test_a():\n    raise KeyboardInterrupt\n"}, 1),
    ("no tests in the files", {"a_test.py": "X = 1\n"}, 1),
    ("no test files", {"readme.txt": ""}, 1),
]


@pytest.mark.parametrize(
    ("files", "expected"), [case[1:] for case in SPEC_PROJECTS], ids=[c[0] for c in SPEC_PROJECTS]
)
def test_a_project_of_the_spec_s_patterns_keeps_0_and_1(
    tmp_path: Path, files: dict[str, str], expected: int
) -> None:
    found = run_cli("test", cwd=write_files(tmp_path, files))
    assert found.code == expected, found.output


def test_the_pytest_rule_follows_the_collection_error_rule(tmp_path: Path) -> None:
    """pytest configuration, a conftest.py above a test file (to the rootdir), a file only pytest's patterns
    name: a pytest suite; the spec's patterns alone: not."""
    spec = TestFile(write_files(tmp_path / "spec", {"sub/a_test.py": ""}) / "sub/a_test.py", "sub/a_test.py")
    assert not is_pytest_suite(load(tmp_path / "spec"), [spec])
    named = TestFile(write_files(tmp_path / "named", {"test_a.py": ""}) / "test_a.py", "test_a.py")
    assert is_pytest_suite(load(tmp_path / "named"), [named])
    write_files(tmp_path / "spec", {"conftest.py": ""})
    assert is_pytest_suite(load(tmp_path / "spec"), [spec])
    configured = write_files(tmp_path / "configured", {"pytest.ini": "[pytest]\n"})
    assert is_pytest_suite(load(configured), [])


def test_exit_status_rules() -> None:
    common = {"failed": False, "tests": 3, "interrupted": False, "exit_code": None}
    assert exit_status(**common, pytest_suite=True) == 0
    assert exit_status(**{**common, "interrupted": True}, pytest_suite=True) == 2
    assert exit_status(**{**common, "interrupted": True}, pytest_suite=False) == 1
    assert exit_status(**{**common, "interrupted": True, "exit_code": 9}, pytest_suite=False) == 9
    assert exit_status(**{**common, "tests": 0}, pytest_suite=True) == 5
    assert exit_status(**{**common, "tests": 0}, pytest_suite=True, pass_with_no_tests=True) == 0
    assert exit_status(**{**common, "tests": 0}, pytest_suite=False) == 1
    assert exit_status(**{**common, "tests": 0, "failed": True}, pytest_suite=True) == 1
