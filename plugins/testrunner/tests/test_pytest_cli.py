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
