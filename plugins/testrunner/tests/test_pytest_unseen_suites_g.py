"""``rt test`` on mechanisms found missing while running unseen projects' suites from their PyPI sdists
(issue 15, session 10, sweep G): each test names the suite that showed it, runs pytest itself on the same small
project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(root: Path, *args: str) -> tuple[dict[str, int], str, str]:
    """``rt test`` in ``root``: the summary's counts, the whole output and stderr alone."""
    result = run_cli("test", *args, cwd=root, timeout=180)
    return summary_counts(result.stderr), result.output, result.stderr


def pytest_counts(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """pytest's outcome counts in ``root``, in rt's words, and its output."""
    result = run_pytest(*args, cwd=root, timeout=180)
    return counts_from_pytest(result.stdout), result.output


#: a plugin module (as pytest-benchmark's): options registered by ``pytest_addoption``, read by a fixture
_PLUGIN = """
import pytest


def pytest_addoption(parser):
    group = parser.getgroup("timing")
    group.addoption("--timing-skip", action="store_true", default=False, help="skip the timing tests")
    group.addoption("--timing-rounds", type=int, default=1, help="rounds")
    group.addoption("--timing-mode", choices=["fast", "slow"], default="slow", dest="mode")


@pytest.fixture
def timing(request):
    if request.config.getoption("timing_skip"):
        pytest.skip("Skipping timing (--timing-skip active).")
    return request.config.option.timing_rounds
"""


def test_an_option_a_plugin_registers_takes_its_value_from_addopts(tmp_path: Path) -> None:
    """portion 2.6.3: its ``addopts = "--benchmark-skip"`` is pytest-benchmark's option, whose ``benchmark``
    fixture skips the test when it is set (pytest: 226 passed, 11 skipped). rt read only the defaults of the
    options plugins register, ignored the word ("not an option rt knows") and ran the 11 benchmarks (237
    passed, 54 times pytest's wall time). pytest parses ``addopts`` with every registered option (a plugin's,
    a conftest.py's), with its action, ``type``, ``choices`` and ``dest``. pytest 9.2: 2 passed, 2 skipped."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            addopts = ["--timing-skip", "--timing-rounds", "3", "--timing-mode=fast", "--repeat=2"]
            """,
            "timingplugin.py": _PLUGIN,
            "conftest.py": """
            pytest_plugins = ["timingplugin"]


            def pytest_addoption(parser):
                parser.addoption("--repeat", action="store", help="as jsonpickle's conftest.py")
            """,
            "test_options.py": """
            def test_uses_timing(timing):
                raise AssertionError("skipped by --timing-skip")


            def test_uses_timing_too(timing):
                raise AssertionError("skipped by --timing-skip")


            def test_values(pytestconfig):
                assert pytestconfig.getoption("timing_rounds") == 3
                assert pytestconfig.option.mode == "fast"
                assert pytestconfig.getoption("--repeat") == "2"


            def test_defaults_of_options_not_given(pytestconfig):
                assert pytestconfig.getoption("timing_skip") is True
            """,
        },
    )
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 2, "skip": 2}, pytest_output
    got, output, stderr = rt_test(tmp_path)
    assert got == expected, output
    assert "ignoring addopts" not in stderr, stderr


def test_a_conftest_option_takes_its_value_from_pytest_addopts(tmp_path: Path) -> None:
    """pytest's documented ``--runslow`` pattern: a conftest.py registers the option and skips the slow tests
    unless it is given. Given in ``PYTEST_ADDOPTS``, as in ``addopts``, it is the option's value under rt too
    (on ``rt test``'s own command line: test_pytest_plugin_options.py). pytest 9.2: 2 passed; without it 1
    passed, 1 skipped."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            def pytest_addoption(parser):
                parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


            def pytest_collection_modifyitems(config, items):
                if config.getoption("--runslow"):
                    return
                skip_slow = pytest.mark.skip(reason="need --runslow option to run")
                for item in items:
                    if "slow" in item.keywords:
                        item.add_marker(skip_slow)
            """,
            "test_slow.py": """
            import pytest


            @pytest.mark.slow
            def test_slow():
                pass


            def test_fast():
                pass
            """,
        },
    )
    for environ, wanted in (({"PYTEST_ADDOPTS": "--runslow"}, {"pass": 2}), ({}, {"pass": 1, "skip": 1})):
        expected = counts_from_pytest(run_pytest("-W", "ignore", cwd=tmp_path, env=environ).stdout)
        assert expected == wanted
        result = run_cli("test", cwd=tmp_path, env=environ, timeout=180)
        assert summary_counts(result.stderr) == expected, result.output


def test_options_rt_reads_itself_keep_the_plugins_defaults(tmp_path: Path) -> None:
    """The other side of reading plugins' options from ``addopts``: ``-n 2 --dist worksteal`` (nameparser
    2.6.0's addopts) are read by rt itself (it runs its own way, and says so), so pytest-xdist's
    ``numprocesses`` and ``dist`` keep their defaults: a plugin that saw them set would think xdist's workers
    ran the tests (syrupy warned that none of the 2 workers reported)."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            addopts = "-n 2 --dist worksteal"
            """,
            # xdist's two options, as pytest-xdist registers them, where it is not installed (the tox env of
            # rt-testrunner alone): the options rt reads itself must keep a plugin's defaults either way
            "conftest.py": """
            import importlib.util


            def pytest_addoption(parser):
                if importlib.util.find_spec("xdist") is None:
                    group = parser.getgroup("xdist", "distributed and subprocess testing")
                    group.addoption("-n", "--numprocesses", dest="numprocesses", default=None)
                    group.addoption("--dist", dest="dist", default="no")
            """,
            "test_xdist_options.py": """
            def test_defaults(pytestconfig):
                assert pytestconfig.getoption("numprocesses") is None
                assert pytestconfig.getoption("dist") == "no"
            """,
        },
    )
    got, output, _ = rt_test(tmp_path)
    assert got == {"pass": 1}, output


def test_an_option_nothing_registers_is_pytests_usage_error(tmp_path: Path) -> None:
    """The other side: an option in ``addopts`` that no plugin or conftest.py registers makes pytest refuse to
    start ("unrecognized arguments", status 4), a registered one next to it left out of the message; rt named it
    on one line and ran the tests (pytest-benchmark 5.3.1's addopts' ``--nbmake`` without nbmake installed:
    pytest refused, rt ran). Now rt refuses too, with pytest's words and status, no test run. pytest 9.2:
    ``error: unrecognized arguments: --no-such-option --other=3``, exit status 4."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            addopts = "--timing-skip --no-such-option 5 --other=3"
            """,
            "conftest.py": 'pytest_plugins = ["timingplugin"]\n',
            "timingplugin.py": _PLUGIN,
            "test_options.py": """
            def test_uses_timing(timing):
                raise AssertionError("skipped by --timing-skip")
            """,
        },
    )
    pytest_run = run_pytest(cwd=tmp_path, timeout=180)
    assert pytest_run.code == 4, pytest_run.output
    assert "error: unrecognized arguments: --no-such-option --other=3" in pytest_run.output, pytest_run.output
    result = run_cli("test", cwd=tmp_path, timeout=180)
    assert result.code == 4, result.output
    assert "usage error: unrecognized arguments: --no-such-option --other=3" in result.stderr, result.output
    assert summary_counts(result.stderr) == {}, result.output
    assert "ignoring addopts" not in result.stderr, result.output


def test_pytests_own_options_rt_does_not_read_are_no_usage_error(tmp_path: Path) -> None:
    """The options pytest registers itself that rt does not read (``--log-disable``, ``--no-fold-skipped``,
    ``--show-capture``, ``--max-warnings`` ...) are no "unrecognized arguments" in ``addopts``: pytest knows
    them, and so the run goes on (those that change a run are named on one line). pytest 9.2: 1 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --log-disable=noisy --no-fold-skipped --show-capture=no --max-warnings 5\n",
            "test_one.py": "def test_one():\n    pass\n",
        },
    )
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 1}, pytest_output
    got, output, stderr = rt_test(tmp_path)
    assert got == expected, output
    assert "unrecognized" not in stderr, stderr


def test_a_plugins_option_without_the_plugin_installed_is_pytests_usage_error(tmp_path: Path) -> None:
    """An option of a plugin rt reads itself, in ``addopts`` or ``PYTEST_ADDOPTS``, without that plugin
    installed: pytest refuses to start (pytest-timeout's ``--timeout=30``, pytest-asyncio's ``--asyncio-mode``,
    neither installed in the test environment); rt read ``--timeout`` as pytest-timeout's, ignored it without
    the plugin and ran the tests, as it did with ``--asyncio-mode``. pytest 9.2: ``error: unrecognized
    arguments: --timeout=30 --asyncio-mode``, exit status 4; ``--timeout`` for ``--timeout 5`` in
    ``PYTEST_ADDOPTS``."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = -q --timeout=30 --asyncio-mode strict\n",
            "test_one.py": "def test_one():\n    pass\n",
        },
    )
    cases = (({}, "--timeout=30 --asyncio-mode"), ({"PYTEST_ADDOPTS": "--timeout 5"}, "--timeout"))
    for environ, named in cases:
        if environ:
            (tmp_path / "pytest.ini").write_text("[pytest]\n")
        pytest_run = run_pytest(cwd=tmp_path, env=environ, timeout=180)
        assert pytest_run.code == 4, pytest_run.output
        assert f"error: unrecognized arguments: {named}\n" in pytest_run.output, pytest_run.output
        result = run_cli("test", cwd=tmp_path, env=environ, timeout=180)
        assert result.code == 4, result.output
        assert f"usage error: unrecognized arguments: {named} !!!" in result.stderr, result.output
        assert summary_counts(result.stderr) == {}, result.output


def test_streams_have_no_file_descriptor_while_capsys_reads_them(tmp_path: Path) -> None:
    """isort 9.0.2: ``colorama.init()`` inside a test probes ``sys.stdout.fileno()`` (and goes on without a
    descriptor when it raises); rt handed the test a file descriptor for its output, as it does for a test
    that asks for one, so every later write went to that descriptor and ``capsys.readouterr()`` saw nothing
    (20 failed in tests/unit against pytest's 2). While ``capsys`` runs, pytest's streams are in-memory
    ``CaptureIO`` objects whose ``fileno()`` raises ``io.UnsupportedOperation``; with ``-s`` too. Under
    ``capfd``, ``sys.stdout.fileno()`` is the descriptor capfd reads (rt gave another file, which capfd did not
    read). pytest 9.2: 3 passed, 1 failed (the test reading the descriptor without capsys gets one, the
    captured file's)."""
    write_files(
        tmp_path,
        {
            "conftest.py": "",
            "test_descriptor.py": """
            import io
            import os
            import sys

            import pytest


            def probe(stream):
                try:
                    return stream.fileno()
                except Exception:
                    return -1


            def test_probe_then_print(capsys):
                assert probe(sys.stdout) == -1
                print("after the probe")
                print("to stderr", file=sys.stderr)
                assert capsys.readouterr() == ("after the probe\\n", "to stderr\\n")


            def test_fileno_raises_unsupported_operation(capsysbinary):
                with pytest.raises(io.UnsupportedOperation):
                    sys.stderr.fileno()


            def test_without_capsys_a_descriptor():
                fd = sys.stdout.fileno()
                os.write(fd, b"written to the descriptor\\n")
                assert fd == -1, "it has one"


            def test_capfd_keeps_descriptors(capfd):
                os.write(sys.stdout.fileno(), b"fd\\n")
                assert capfd.readouterr().out == "fd\\n"
            """,
        },
    )
    for args in ((), ("-s",)):
        expected, pytest_output = pytest_counts(tmp_path, *args)
        assert expected == {"pass": 3, "fail": 1}, pytest_output
        got, output, _ = rt_test(tmp_path, *args)
        assert got == expected, output
