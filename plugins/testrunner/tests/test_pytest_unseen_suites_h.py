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


def test_the_streams_capsys_reads_have_no_file_descriptor(tmp_path: Path) -> None:
    """tqdm 4.70.1: a progress bar probes its stream's ``fileno()`` for the terminal's width, then writes to
    the stream; its tests read the bar with ``capsys``. pytest's capsys streams (``CaptureIO``) have no file
    descriptor: ``fileno()`` raises ``io.UnsupportedOperation`` and the bar is written to the stream capsys
    reads. rt gave the test a file of its own, to which the writes then went: 61 failed tests in tqdm.
    Without capsys (pytest's default fd capture) the streams do have one. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_bar.py": """
                import io
                import os
                import sys

                import pytest

                def draw(stream):
                    try:
                        os.fstat(stream.fileno())
                    except io.UnsupportedOperation:
                        pass
                    stream.write("bar 3/3")

                def test_bar_read_by_capsys(capsys):
                    draw(sys.stderr)
                    assert "3/3" in capsys.readouterr().err

                def test_no_descriptor_under_capsys(capsys):
                    with pytest.raises(io.UnsupportedOperation):
                        sys.stdout.fileno()

                def test_a_descriptor_without_capsys():
                    assert isinstance(sys.stdout.fileno(), int)
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


def test_threads_asking_for_a_captured_streams_descriptor_at_once_share_one(tmp_path: Path) -> None:
    """tqdm 4.70.1's ``test_threadpool`` (now and then under rt): bars in a thread pool each ask
    ``sys.stderr.fileno()``; rt makes the test a file for it when first asked, and two threads asking at
    once each made one, the second replacing the first, which leaked (an unclosed-file ``ResourceWarning``,
    made a failure by tqdm's ``-W error``). Here the two threads meet inside the making of the file (a
    ``TemporaryFile`` that waits for the other thread, up to a bound), so without the lock both make one;
    with it, the second waits and gets the first's. pytest 9.2: 1 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nfilterwarnings = error\n",
            "test_threads.py": """
                import sys
                import tempfile
                import threading

                def test_one_descriptor(monkeypatch):
                    meeting = threading.Barrier(2)
                    real = tempfile.TemporaryFile

                    def meeting_file(*args, **kwargs):
                        try:
                            meeting.wait(timeout=10)  # only bounds the wait when the other cannot come
                        except threading.BrokenBarrierError:
                            pass
                        return real(*args, **kwargs)

                    monkeypatch.setattr(tempfile, "TemporaryFile", meeting_file)
                    found = []
                    threads = [threading.Thread(target=lambda: found.append(sys.stderr.fileno())) for _ in range(2)]
                    for thread in threads:
                        thread.start()
                    for thread in threads:
                        thread.join()
                    assert len(found) == 2 and found[0] == found[1], found
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


def test_the_tests_see_pytests_command_line_in_sys_argv(tmp_path: Path) -> None:
    """crcmod 1.7: its test module runs ``unittest.main()``, which reads ``sys.argv[1:]``, as ``argparse``'s
    ``parse_args()`` does when a test calls it with no arguments. Under ``pytest ARGS`` that is ARGS; under
    ``rt test ARGS`` it was ``["test", *ARGS]``, and ``test`` is an argument neither knows (unittest took it
    for the name of a test to run, and failed). The tests now see the program and ARGS, as pytest's.
    pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_argv.py": """
                import argparse
                import sys

                def test_parse_args_reads_the_runners_arguments():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("-p", action="append")
                    parser.add_argument("-k")
                    parser.add_argument("--parallel")  # rt's, given below
                    assert parser.parse_args().k == "argv"

                def test_the_arguments_end_with_the_selection():
                    assert sys.argv[-2:] == ["-k", "argv"]
                    assert "test" not in sys.argv[1:]
            """,
        },
    )
    same_counts_as_pytest(tmp_path, "-k", "argv")
    rt_run = run_cli("test", "--parallel=2", "-k", "argv", cwd=tmp_path)
    assert "2 pass" in rt_run.stderr, rt_run.output
