"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 10, sweep H: command-line, configuration and terminal libraries): each test names the suite that
showed it, runs pytest itself on the same small project and compares the outcome counts, so a difference in
either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, same_counts_as_pytest, write_files


def test_a_static_method_over_a_fixture_in_a_test_class_is_that_fixture(tmp_path: Path) -> None:
    """cloup 4.0.0: ``@staticmethod`` above ``@pytest.fixture`` in a test class. pytest 9.2 looks the class's
    names up with ``getattr``, which unwraps the static method, so the fixture is found (and called without
    ``self``), in subclasses too, with a ``PytestWarning`` to put ``@pytest.fixture`` on top;
    ``@classmethod`` above it hides the fixture (a set-up error for a test asking for it). rt read the
    class's ``__dict__`` and saw no fixture: 4 set-up errors in cloup. pytest 9.2: 4 passed, 2 errors."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_classes.py": """
                import pytest

                class TestStatic:
                    @staticmethod
                    @pytest.fixture(scope="class")
                    def command():
                        return 3

                    @pytest.fixture
                    @staticmethod
                    def other():
                        return 4

                    @classmethod
                    @pytest.fixture
                    def hidden(cls):
                        return 5

                    def test_static(self, command, other):
                        assert command + other == 7

                    def test_class_method(self, hidden):
                        pass

                class TestInherited(TestStatic):
                    def test_inherited(self, command):
                        assert command == 3
            """,
        },
    )
    same_counts_as_pytest(tmp_path)
    rt_run = run_cli("test", "-W", "error", cwd=tmp_path)
    assert "fixture 'command' is wrapped by @staticmethod above @pytest.fixture" in rt_run.output, (
        rt_run.output
    )
