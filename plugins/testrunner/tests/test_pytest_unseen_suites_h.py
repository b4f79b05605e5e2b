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


def test_an_installed_plugins_autouse_fixture_and_the_object_its_configure_registers(tmp_path: Path) -> None:
    """rich-click at its GitHub head, with inline-snapshot installed: inline-snapshot's ``pytest_configure``
    registers a plugin object whose own ``pytest_configure`` turns snapshots on (pytest_configure is a
    historic hook: an object registered while it runs is configured at once), and its autouse
    ``snapshot_check`` fixture fails the teardown of a test whose snapshots are wrong, one more error. rt
    called neither: it set up no installed plugin's autouse fixture (only a suite's override of its name),
    and configured an object registered during pytest_configure only when registered later. pytest 9.2:
    2 passed, 1 failed, 2 errors."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "checkplug-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: checkplug\nVersion: 1.0\n",
            "checkplug-1.0.dist-info/entry_points.txt": "[pytest11]\ncheckplug = checkplug_plugin\n",
            "checkplug_plugin.py": """
                import pytest

                STATE = {"active": False, "wrong": []}

                def compare(actual, expected):
                    if STATE["active"] and actual != expected:
                        STATE["wrong"].append((actual, expected))
                    return True

                class Activator:
                    def pytest_configure(self, config):
                        STATE["active"] = True

                def pytest_configure(config):
                    config.pluginmanager.register(Activator(), "checkplug-activator")

                @pytest.fixture(autouse=True)
                def check_compared():
                    STATE["wrong"].clear()
                    yield
                    if STATE["wrong"]:
                        pytest.fail(f"wrong values: {STATE['wrong']}", pytrace=False)
            """,
            "test_values.py": """
                from checkplug_plugin import compare

                def test_right():
                    assert compare(1, 1)

                def test_wrong():
                    assert compare(1, 2)

                def test_wrong_and_failing():
                    assert compare(1, 2)
                    assert False

                def test_plain():
                    pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path)
