"""``rt test`` on pytest's options and environment variables at the edges of collection (issue 15, session
12): each test writes a small project, runs pytest 9.2 and ``rt test`` on it with the same options, and
compares what both collect and count."""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def both(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[dict[str, int], str, dict[str, int], str]:
    """pytest's counts and output, then ``rt test``'s, on the project in ``root``."""
    pytest_run = run_pytest(*args, cwd=root, env=env, timeout=180)
    rt_run = run_cli("test", *args, cwd=root, env=env, timeout=180)
    return (
        counts_from_pytest(pytest_run.stdout),
        pytest_run.output,
        summary_counts(rt_run.stderr),
        rt_run.output,
    )


def test_confcutdir_leaves_the_conftest_files_above_it_unloaded(tmp_path: Path) -> None:
    """``--confcutdir tests``: pytest loads no conftest.py above ``tests``, so the root conftest.py's fixture
    is not found (an error at set-up). rt accepted the option and ignored it: the test passed. The same from
    ``addopts``; ``--confcutdir .`` changes nothing. pytest 9.2: 1 error; without it, 1 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            @pytest.fixture
            def where():
                return "root"
            """,
            "tests/conftest.py": "",
            "tests/test_where.py": """
            def test_where(where):
                assert where == "root"
            """,
        },
    )
    for args, outcome in (((), "pass"), (("--confcutdir", "tests"), "error"), (("--confcutdir=.",), "pass")):
        expected, pytest_output, counts, output = both(tmp_path, *args)
        assert expected == {outcome: 1}, pytest_output
        assert counts == expected, output
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = --confcutdir=tests\n"})
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"error": 1}, pytest_output
    assert counts == expected, output


def test_pytest_plugins_environment_variable_loads_its_modules_as_plugins(tmp_path: Path) -> None:
    """``PYTEST_PLUGINS=plugin_a,plugin_b``: pytest imports each module as a plugin of the session (its
    fixtures and hooks). rt read no such variable: the fixture was not found. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "plugin_a.py": """
            import pytest


            @pytest.fixture
            def answer():
                return 42
            """,
            "plugin_b.py": """
            def pytest_configure(config):
                config.addinivalue_line("markers", "slow: from plugin_b")
                config.plugin_b_loaded = True
            """,
            "test_plugins.py": """
            def test_fixture_of_plugin_a(answer):
                assert answer == 42


            def test_hook_of_plugin_b(pytestconfig):
                assert pytestconfig.plugin_b_loaded
            """,
        },
    )
    expected, pytest_output, counts, output = both(tmp_path, env={"PYTEST_PLUGINS": "plugin_a,plugin_b"})
    assert expected == {"pass": 2}, pytest_output
    assert counts == expected, output


def test_pyargs_collects_a_packages_tests_by_its_dotted_name(tmp_path: Path) -> None:
    """``--pyargs mypkg.tests`` (an installed package's tests, run from elsewhere): pytest takes each argument
    as a module or package name and collects the file or folder it imports from, with node ids relative to
    it; a name that does not import is its usage error. rt refused ``--pyargs`` (status 4). pytest 9.2:
    2 passed, 1 failed; ``mypkg.tests.test_core::test_one`` 1 passed; ``nopkg.x`` "module or package not
    found: nopkg.x (missing __init__.py?)", exit status 4 (rt's was 1)."""
    write_files(
        tmp_path,
        {
            "lib/mypkg/__init__.py": "",
            "lib/mypkg/tests/__init__.py": "",
            "lib/mypkg/tests/test_core.py": """
            def test_one():
                pass


            def test_two():
                assert 0
            """,
            "lib/mypkg/tests/test_more.py": """
            def test_three():
                pass
            """,
            "run/README": "",
        },
    )
    run = tmp_path / "run"
    env = {"PYTHONPATH": str(tmp_path / "lib")}
    expected, pytest_output, counts, output = both(run, "--pyargs", "mypkg.tests", env=env)
    assert expected == {"pass": 2, "fail": 1}, pytest_output
    assert counts == expected, output
    expected, pytest_output, counts, output = both(
        run, "--pyargs", "mypkg.tests.test_core::test_one", env=env
    )
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output
    listed = run_cli("test", "--pyargs", "mypkg.tests", "--co", cwd=run, env=env)
    pytest_listed = run_pytest("--pyargs", "mypkg.tests", "--co", "-q", cwd=run, env=env)
    node_ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert node_ids == [line for line in pytest_listed.stdout.splitlines() if "::" in line], listed.output
    assert node_ids == ["test_core.py::test_one", "test_core.py::test_two", "test_more.py::test_three"]
    missing = run_cli("test", "--pyargs", "nopkg.x", cwd=run, env=env)
    assert "module or package not found: nopkg.x (missing __init__.py?)" in missing.stderr, missing.output
    pytest_missing = run_pytest("--pyargs", "nopkg.x", cwd=run, env=env)
    assert "module or package not found: nopkg.x" in pytest_missing.output, pytest_missing.output
    # pytest's usage error, status 4 (rt exited 1, its own usage errors' status)
    assert missing.code == pytest_missing.code == 4, (missing.output, pytest_missing.output)


_ROOT_CONFTEST = {
    "conftest.py": """
    import pytest


    @pytest.fixture
    def where():
        return "root"
    """,
    "tests/test_where.py": """
    def test_where(where):
        assert where == "root"
    """,
}


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.py"])
def test_a_run_started_in_the_tests_folder_has_the_projects_rootdir(tmp_path: Path, marker: str) -> None:
    """``cd tests && pytest`` in a project whose ``pyproject.toml`` has no pytest table (or with a
    ``setup.py`` alone): pytest takes that file's folder for the rootdir, so the root conftest.py's fixture is
    found (its conftest.py files are loaded from the rootdir down). rt took the folder it ran in: the fixture was not
    found (1 error). pytest 9.2: 1 passed."""
    text = '[project]\nname = "x"\nversion = "0"\n' if marker == "pyproject.toml" else "raise SystemExit\n"
    write_files(tmp_path, {**_ROOT_CONFTEST, marker: text})
    expected, pytest_output, counts, output = both(tmp_path / "tests")
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output


def test_pytest_toml_is_pytest_9s_configuration_file_and_comes_first(tmp_path: Path) -> None:
    """pytest 9's ``pytest.toml`` (its ``[pytest]`` table, native TOML values) is found before a pytest.ini,
    pyproject.toml, tox.ini or setup.cfg of the same folder. rt did not read it: its ``python_files`` and
    ``markers`` under ``--strict-markers`` were not applied, and the pytest.ini was read instead. pytest 9.2:
    1 passed (``check_one.py``), 1 deselected by ``-m 'not slow'`` of its addopts."""
    write_files(
        tmp_path,
        {
            "pytest.toml": """
            [pytest]
            python_files = ["check_*.py"]
            markers = ["slow: slow tests"]
            addopts = ["--strict-markers", "-m", "not slow"]
            """,
            "pytest.ini": "[pytest]\npython_files = nothing_*.py\n",
            "tox.ini": "[pytest]\npython_files = nothing_*.py\n",
            "check_one.py": """
            import pytest


            def test_one():
                pass


            @pytest.mark.slow
            def test_slow():
                raise AssertionError("deselected")
            """,
            "test_other.py": """
            def test_not_collected():
                raise AssertionError("python_files names check_*.py only")
            """,
        },
    )
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output


@pytest.mark.parametrize("beside", ["", "pytest.ini"])
def test_a_pytest_section_in_setup_cfg_is_refused_as_pytest_refuses_it(tmp_path: Path, beside: str) -> None:
    """A setup.cfg with a ``[pytest]`` section (not ``[tool:pytest]``): pytest stops before collecting, "[pytest]
    section in setup.cfg files is no longer supported, change to [tool:pytest] instead.", exit status 1, also
    when a pytest.ini of the same folder holds the configuration (pytest reads the folder's other files to list
    those it ignores). rt ran the tests without that configuration (here: 1 passed where the section's
    ``python_files`` names no file). pytest 9.2: that line, status 1; with ``[tool:pytest]`` too, 1 passed."""
    files = {
        "setup.cfg": "[metadata]\nname = x\n\n[pytest]\npython_files = check_*.py\n",
        "test_one.py": "def test_one():\n    pass\n",
    }
    if beside:
        files[beside] = "[pytest]\n"
    write_files(tmp_path, files)
    message = "[pytest] section in setup.cfg files is no longer supported, change to [tool:pytest] instead."
    pytest_run = run_pytest(cwd=tmp_path, timeout=180)
    assert pytest_run.code == 1 and message in pytest_run.output, pytest_run.output
    rt_run = run_cli("test", cwd=tmp_path, timeout=180)
    assert rt_run.code == 1, rt_run.output
    assert rt_run.stderr.strip() == f"error: {message}", rt_run.output
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\n\n[pytest]\npython_files = check_*.py\n")
    expected, pytest_output, counts, output = both(tmp_path)
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output


def test_a_conftest_options_value_that_names_a_folder_is_its_value(tmp_path: Path) -> None:
    """``--basedir tests``, an option the root conftest.py registers with a value: pytest parses its command
    line once that conftest.py registered it, so ``tests`` is the option's value and the run collects from
    the rootdir. rt, which picks its test paths before any conftest.py loads, took ``tests`` for a test path
    (the option then had no value: pytest's usage error). A flag's following word stays a test path
    (``--fast tests``). pytest 9.2: 2 passed; ``--fast tests``: 1 failed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_addoption(parser):
                parser.addoption("--basedir", action="store", default=None, help="base dir")
                parser.addoption("--fast", action="store_true")
            """,
            "test_root.py": """
            def test_root(pytestconfig):
                assert pytestconfig.getoption("basedir") == "tests"
            """,
            "tests/test_t.py": """
            def test_t(pytestconfig):
                assert pytestconfig.getoption("basedir") == "tests"
            """,
        },
    )
    for args, outcome in ((("--basedir", "tests"), {"pass": 2}), (("--fast", "tests"), {"fail": 1})):
        expected, pytest_output, counts, output = both(tmp_path, *args)
        assert expected == outcome, pytest_output
        assert counts == expected, output


def test_an_option_of_a_conftest_loaded_while_collecting_is_unrecognized_on_the_command_line(
    tmp_path: Path,
) -> None:
    """``sub/conftest.py`` registers ``--subopt``; ``pytest --subopt`` from the rootdir: pytest parses its
    command line after its initial conftest.py files (the rootdir's, its ``test*`` folders') and before it
    meets ``sub/``, so the option is "unrecognized arguments", status 4. rt accepted it (the option was known
    by the time it checked). Given ``sub`` the conftest.py is an initial one and the run passes, under both.
    pytest 9.2: usage error, status 4; with ``sub``: 1 passed."""
    write_files(
        tmp_path,
        {
            "sub/conftest.py": """
            def pytest_addoption(parser):
                parser.addoption("--subopt", action="store_true")
            """,
            "sub/test_s.py": """
            def test_s(pytestconfig):
                assert pytestconfig.getoption("subopt")
            """,
        },
    )
    pytest_run = run_pytest("--subopt", cwd=tmp_path)
    rt_run = run_cli("test", "--subopt", cwd=tmp_path, timeout=180)
    assert "unrecognized arguments: --subopt" in pytest_run.output
    assert "unrecognized arguments: --subopt" in rt_run.stderr, rt_run.output
    assert (pytest_run.code, rt_run.code) == (4, 4), rt_run.output
    expected, pytest_output, counts, output = both(tmp_path, "--subopt", "sub")
    assert expected == {"pass": 1}, pytest_output
    assert counts == expected, output


def test_config_file_and_rootdir_in_pytest_addopts_choose_the_configuration(tmp_path: Path) -> None:
    """``PYTEST_ADDOPTS="-c ci/pytest.ini"``: pytest puts the variable's words before its command line before
    it looks for its configuration, so the file chooses it (here ``python_files = check_*.py``). rt read ``-c``
    only from its own command line and collected ``test_y.py``. pytest 9.2 ``--co``: ``check_x.py::test_c``."""
    write_files(
        tmp_path,
        {
            "ci/pytest.ini": "[pytest]\npython_files = check_*.py\n",
            "tests/check_x.py": "def test_c():\n    pass\n",
            "tests/test_y.py": "def test_t():\n    pass\n",
        },
    )
    for environ in ("-c ci/pytest.ini", "--config-file=ci/pytest.ini --rootdir=ci"):
        env = {"PYTEST_ADDOPTS": environ}
        listed = run_cli("test", "tests", "--co", cwd=tmp_path, env=env, timeout=180)
        pytest_listed = run_pytest("tests", "--co", "-q", cwd=tmp_path, env=env)
        node_ids = [line for line in listed.stdout.splitlines() if "::" in line]
        assert node_ids == [line for line in pytest_listed.stdout.splitlines() if "::" in line], listed.output
        assert node_ids == ["check_x.py::test_c"], pytest_listed.output


@pytest.mark.parametrize(
    ("table", "accepted"),
    [
        ('[tool.pytest]\nverbosity_subtests = "0"\n', False),  # psutil 7.2.2's
        ('[tool.pytest]\naddopts = "-q"\n', False),
        ('[tool.pytest]\nmarkers = ["slow: slow", 3]\n', False),
        ('[tool.pytest]\nlog_cli = "true"\n', False),
        ('[tool.pytest]\nverbosity_subtests = "auto"\nmarkers = ["slow: slow"]\n', True),
        ('[tool.pytest.ini_options]\nverbosity_subtests = "0"\naddopts = "-q"\n', True),  # ini text: no check
        # read while the run's paths are worked out: rt crashed there (IndexError) before the check
        ('[tool.pytest]\ntestpaths = "."\n', False),
        ("[tool.pytest]\nminversion = 8\n", False),
        ('[tool.pytest]\nrequired_plugins = "pytest-xdist"\n', False),
        # a fixed choice (pytest's Literal types): rt ran the suite
        ('[tool.pytest]\nconsole_output_style = "bogus"\n', False),
        ('[tool.pytest]\nlog_file_mode = "x"\n', False),
        ('[tool.pytest]\nempty_parameter_set_mark = "bogus"\n', False),
        ('[tool.pytest]\nconsole_output_style = "count"\nlog_file_mode = "a"\n', True),
        ('[tool.pytest.ini_options]\nlog_file_mode = "x"\n', False),  # choices are checked in ini text too
    ],
    ids=[
        "verbosity-str",
        "addopts-str",
        "markers-int-item",
        "log-cli-str",
        "right-types",
        "ini-options",
        "testpaths-str",
        "minversion-int",
        "required-plugins-str",
        "console-style-choice",
        "log-file-mode-choice",
        "empty-parameter-set-choice",
        "right-choices",
        "ini-options-choice",
    ],
)
def test_the_native_toml_tables_values_are_checked_as_pytest_checks_them(
    tmp_path: Path, table: str, accepted: bool
) -> None:
    """pytest 9 keeps the native ``[tool.pytest]`` table's TOML types and refuses a value of the wrong type
    for an option it reads in every run: status 4 and ``ERROR: <file>: config option 'verbosity_subtests'
    expects one of int | 'auto', got str: '0'`` before any test. rt ran the suite (psutil 7.2.2). The
    ``[tool.pytest.ini_options]`` table is ini text, as pytest reads it: no check. pytest 9.2: the same."""
    write_files(tmp_path, {"pyproject.toml": table, "test_a.py": "def test_a():\n    pass\n"})
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    rt_run = run_cli("test", "-p", "no:randomly", cwd=tmp_path)
    assert pytest_run.code == (0 if accepted else 4), pytest_run.output
    assert rt_run.code == pytest_run.code, rt_run.output
    if not accepted:
        line = next(line for line in pytest_run.stderr.splitlines() if line.startswith("ERROR: "))
        assert line.removeprefix("ERROR: ") in rt_run.output, (line, rt_run.output)
