"""Installed pytest plugins (entry points ``pytest11``) take part in ``rt test`` runs as under pytest (issue 15).

Each test writes a small project using the plugins installed with this distribution's ``[test]`` extra and
compares ``rt test``'s outcome counts with pytest's on the same project. A plugin of the test's own making
(a distribution written into a folder on ``PYTHONPATH``) shows what happens when a plugin's hook fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import (
    CliResult,
    counts_from_pytest,
    run_cli,
    run_pytest,
    summary_counts,
    write_files,
)

Result = CliResult
project = write_files


def run_rt_test(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_cli("test", *args, cwd=cwd, env=env, timeout=180)


def counts(result: Result) -> dict[str, int]:
    return summary_counts(result.stderr)


def pytest_counts(cwd: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, int]:
    """pytest's outcome counts on ``cwd``, in rt's words."""
    return counts_from_pytest(run_pytest(*args, cwd=cwd, env=env).stdout)


PLUGIN_SUITE = {
    "pyproject.toml": """
    [tool.pytest.ini_options]
    env = ["MY_ENV_VAR=from-ini", "D:OTHER=default"]
    """,
    "conftest.py": """
    import os

    # pytest-env sets the ini's variables before any conftest.py loads
    AT_CONFTEST_IMPORT = os.environ.get("MY_ENV_VAR")
    """,
    "data/f.txt": "hello\n",
    "__snapshots__/test_plugins.ambr": """\
    # serializer version: 1
    # name: test_snapshot
      dict({
        'a': 1,
      })
    # ---
    """,
    "test_plugins.py": """
    import os

    import pytest
    from pytest_lazy_fixtures import lf

    import conftest

    RAN = []
    ATTEMPTS = []


    def test_env_from_ini():
        RAN.append("env")
        assert os.environ["MY_ENV_VAR"] == "from-ini"
        assert os.environ["OTHER"] == "default"
        assert conftest.AT_CONFTEST_IMPORT == "from-ini"


    def test_benchmark(benchmark):
        assert benchmark(sum, [1, 2, 3]) == 6


    def test_snapshot(snapshot):
        assert {"a": 1} == snapshot


    def test_datadir(shared_datadir, request):
        assert (shared_datadir / "f.txt").read_text() == "hello\\n"
        assert request.fspath.dirname == os.path.dirname(__file__)  # pytest's py.path.local


    @pytest.fixture
    def one():
        return 1


    @pytest.mark.parametrize("v", [lf("one")])
    def test_lazy(v, request):
        assert v == 1
        assert request.node.name == "test_lazy[one]"


    @pytest.mark.flaky(reruns=2)
    def test_flaky_then_passes():
        ATTEMPTS.append(1)
        assert len(ATTEMPTS) >= 2


    @pytest.mark.flaky(reruns=1)
    def test_flaky_always_fails():
        assert False


    @pytest.mark.dependency()
    def test_a():
        assert False


    @pytest.mark.dependency(depends=["test_a"])
    def test_b():
        pass


    @pytest.mark.order(1)
    def test_ordered_first():
        assert RAN == []  # pytest-order moved it before every other test
    """,
}


def test_installed_plugins_take_part_in_the_run_as_under_pytest(tmp_path: Path) -> None:
    """pytest-env (``pytest_load_initial_conftests``), pytest-benchmark (``pytest_configure`` sets up the
    session its fixture reads), syrupy (``pytest_sessionstart``), pytest-datadir (``request.fspath`` is a
    ``py.path.local``), pytest-lazy-fixtures (``pytest_make_parametrize_id``, ``pytest_fixture_setup`` of a
    directly parametrized value), pytest-dependency (its ``pytest_runtest_makereport`` wrapper and
    ``pytest_runtest_setup`` skip), pytest-order (``pytest_collection_modifyitems`` of an object its
    ``pytest_configure`` registers), pytest-rerunfailures (a ``flaky`` test runs again, each rerun counted):
    the same counts as pytest's."""
    project(tmp_path, PLUGIN_SUITE)
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 7, "fail": 2, "skip": 1, "rerun": 2}, result.stderr
    assert "(fail) test_a" in result.stderr
    assert "(skip) test_b" in result.stderr
    assert "test_lazy[one]" in result.stderr
    assert counts(result) == pytest_counts(tmp_path)


def test_plugin_autoload_can_be_turned_off(tmp_path: Path) -> None:
    """``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` and ``-p no:NAME`` in addopts leave plugins out, as pytest does."""
    project(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            env = ["MY_ENV_VAR=from-ini"]
            """,
            "test_env.py": """
            import os

            def test_env_not_applied():
                assert "MY_ENV_VAR" not in os.environ
            """,
        },
    )
    assert counts(run_rt_test(tmp_path, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) == {"pass": 1}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nenv = ["MY_ENV_VAR=from-ini"]\naddopts = "-p no:env"\n'
    )
    assert counts(run_rt_test(tmp_path)) == {"pass": 1}
    assert counts(run_rt_test(tmp_path)) == pytest_counts(tmp_path)


def _broken_plugin(site: Path, hook: str) -> dict[str, str]:
    """An installed distribution ``broken-plugin`` whose ``hook`` raises."""
    info = "broken_plugin-1.0.dist-info"
    write_files(
        site,
        {
            f"{info}/METADATA": "Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n",
            f"{info}/entry_points.txt": "[pytest11]\nbroken = broken_plugin\n",
            "broken_plugin.py": f"""
            def {hook}(**kwargs):
                raise RuntimeError("the plugin's own bug")
            """,
        },
    )
    return {"PYTHONPATH": str(site)}


@pytest.mark.parametrize(
    "hook",
    [
        "pytest_configure",
        "pytest_generate_tests",
        "pytest_collection_modifyitems",
        "pytest_itemcollected",
        "pytest_collection_finish",
        "pytest_make_parametrize_id",
        "pytest_ignore_collect",
    ],
)
def test_a_failing_plugin_hook_is_one_line_naming_the_plugin(tmp_path: Path, hook: str) -> None:
    """A plugin whose ``pytest_configure`` raises, or whose collection hook fails on rt's collection objects
    (pytest-asyncio's ``pytest_generate_tests`` in auto mode), is named in one line and left out; the tests
    still run (the file is no collection error)."""
    env = _broken_plugin(tmp_path / "site", hook)
    suite = project(
        tmp_path / "suite",
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "test_x.py": "import pytest\n\n"
            "def test_ok():\n    pass\n\n"
            "@pytest.mark.parametrize('n', [object(), object()])\n"
            "def test_params(n):\n    pass\n",
        },
    )
    result = run_rt_test(suite, env=env)
    assert counts(result) == {"pass": 3}, result.stderr
    lines = [line for line in result.stderr.splitlines() if "broken-plugin" in line]
    assert lines == [
        f"rt test: pytest plugin 'broken-plugin': {hook} raised RuntimeError: the plugin's own bug"
        " (the plugin is left out of this run)"
    ]
    assert "Traceback" not in result.stderr


def test_a_plugin_hook_failing_in_a_test_is_that_test_error_naming_the_plugin(tmp_path: Path) -> None:
    env = _broken_plugin(tmp_path / "site", "pytest_runtest_setup")
    suite = project(
        tmp_path / "suite",
        {"pyproject.toml": "[tool.pytest.ini_options]\n", "test_x.py": "def test_ok():\n    pass\n"},
    )
    result = run_rt_test(suite, env=env)
    assert counts(result) == {"error": 1}, result.stderr
    assert (
        "pytest plugin 'broken-plugin': pytest_runtest_setup raised RuntimeError: the plugin's own bug"
        in result.stderr
    )


def test_a_plugin_s_ini_default_none_and_config_cleanups(tmp_path: Path) -> None:
    """pytest-asyncio declares an ini value with ``default=None`` and reads None as "not set"; pytest-mock's
    ``pytest_configure`` calls ``config.add_cleanup``: both as pytest 9 (the cleanup runs when the session
    ends), so neither plugin is left out."""
    site = tmp_path / "site"
    info = "tidy_plugin-1.0.dist-info"
    write_files(
        site,
        {
            f"{info}/METADATA": "Metadata-Version: 2.1\nName: tidy-plugin\nVersion: 1.0\n",
            f"{info}/entry_points.txt": "[pytest11]\ntidy = tidy_plugin\n",
            "tidy_plugin.py": """
            import sys

            def pytest_addoption(parser):
                parser.addini("tidy_mode", "a value that may be unset", default=None)

            def pytest_configure(config):
                assert config.getini("tidy_mode") is None, config.getini("tidy_mode")
                config.add_cleanup(lambda: sys.stderr.write("tidy cleanup ran\\n"))
            """,
        },
    )
    suite = write_files(
        tmp_path / "suite",
        {"pyproject.toml": "[tool.pytest.ini_options]\n", "test_x.py": "def test_ok():\n    pass\n"},
    )
    result = run_cli("test", cwd=suite, env={"PYTHONPATH": str(site)})
    assert summary_counts(result.stderr) == {"pass": 1}, result.stderr
    assert "left out" not in result.stderr, result.stderr
    assert "tidy cleanup ran" in result.stderr, result.stderr
