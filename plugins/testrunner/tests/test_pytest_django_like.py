"""What pytest-django leans on, without Django (issue 15: djangorestframework 3.18.3's suite).

pytest-django reads its options in ``pytest_load_initial_conftests`` through ``parser.parse_known_args(args)``
(rt's parser had no such method: the plugin was left out, and every test needing its database blocker was an
error), and Django's ``TestCase`` sets up its test client and per-test transaction in ``__call__``, which
pytest's unittest plugin calls (rt called ``TestCase.run``: 358 of the suite's tests failed); its
``DJANGO_SETTINGS_MODULE`` in setup.cfg keeps its case (django-model-utils 5.0.0), and its ``--nomigrations``
in addopts is not undone by ``--migrations`` (django-extensions 4.1). Each test here
runs a small project under pytest 9.2 and under ``rt test`` and compares them.
"""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: an installed plugin (a distribution on PYTHONPATH) that registers options and reads them back before
#: any conftest.py loads, as pytest-django reads --ds, --dc and --version
EARLY_OPTIONS_PLUGIN = {
    "early_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: early-plugin\nVersion: 1.0\n",
    "early_plugin-1.0.dist-info/entry_points.txt": "[pytest11]\nearly = early_plugin\n",
    "early_plugin.py": """
        import os

        def pytest_addoption(parser):
            group = parser.getgroup("early")
            group.addoption("--settings-module", dest="settings", default=None)
            group.addoption("--fail-loudly", action="store_true", dest="loud", default=False)
            group.addoption("--level", type=int, default=1)

        def pytest_load_initial_conftests(early_config, parser, args):
            options = parser.parse_known_args(args)
            seen = f"{options.settings}|{options.loud}|{options.level}|{bool(options.version or options.help)}"
            os.environ["EARLY_SEEN"] = seen
    """,
}

READS_THEM = {
    "test_early.py": """
        import os

        def test_the_plugin_saw_its_options():
            assert os.environ["EARLY_SEEN"] == "proj.settings|True|3|False"
    """,
}


def test_a_plugin_parses_its_options_before_the_conftest_files_load(tmp_path: Path) -> None:
    """``parser.parse_known_args(args)`` in ``pytest_load_initial_conftests``: the options of addopts (and
    ``PYTEST_ADDOPTS``) for every option registered so far, with pytest's own (``version``, ``help``)."""
    env = {
        "PYTHONPATH": str(write_files(tmp_path / "site", EARLY_OPTIONS_PLUGIN)),
        "PYTEST_ADDOPTS": "--level=3",
    }
    project = write_files(
        tmp_path / "project",
        {
            **READS_THEM,
            "pyproject.toml": """
            [tool.pytest.ini_options]
            addopts = "--settings-module proj.settings --fail-loudly"
            """,
        },
    )
    pytest_run = run_pytest(cwd=project, env=env)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 1}, pytest_run.stdout
    rt_run = run_cli("test", cwd=project, env=env)
    assert summary_counts(rt_run.stderr) == {"pass": 1}, rt_run.stderr
    assert "early-plugin" not in rt_run.stderr  # not left out of the run


#: a TestCase that wraps its run in ``__call__``, as Django's SimpleTestCase does (its client, its atomic block)
WRAPS_ITS_RUN = {
    "test_wrapped.py": """
        import unittest

        OPEN = []

        class WrappedTestCase(unittest.TestCase):
            def __call__(self, result=None):
                self.client = "client"
                OPEN.append(self.id())
                try:
                    return super().__call__(result)
                finally:
                    OPEN.remove(self.id())

        class TestUsesTheClient(WrappedTestCase):
            def setUp(self):
                assert OPEN == [self.id()]

            def test_client(self):
                assert self.client == "client"

            def test_fails_inside(self):
                assert self.client == "another"

            def tearDown(self):
                assert OPEN == [self.id()]

        def test_nothing_left_open():
            assert OPEN == []
    """,
}


def test_a_testcase_is_called_as_pytest_calls_it(tmp_path: Path) -> None:
    """pytest's unittest plugin runs a test by calling the TestCase (``testcase(result=...)``): a class that
    sets up around its run in ``__call__`` (Django's test client and per-test transaction) has it done."""
    write_files(tmp_path, WRAPS_ITS_RUN)
    pytest_run = run_pytest(cwd=tmp_path)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 2, "fail": 1}, pytest_run.stdout
    rt_run = run_cli("test", cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 2, "fail": 1}, rt_run.stderr
    assert "assert 'client' == 'another'" in rt_run.stderr


#: an ini name in capitals, as pytest-django's DJANGO_SETTINGS_MODULE, read by the conftest.py that registers it
CAPITAL_INI_NAME = {
    "conftest.py": """
        def pytest_addoption(parser):
            parser.addini("SETTINGS_MODULE", "where the settings are")

        def pytest_configure(config):
            config.settings_module = config.getini("SETTINGS_MODULE")
    """,
    "test_settings.py": """
        def test_the_settings_module_was_read(request):
            assert request.config.settings_module == "proj.settings"
    """,
}


def test_ini_names_keep_their_case_in_ini_files(tmp_path: Path) -> None:
    """pytest reads pytest.ini, tox.ini and setup.cfg with iniconfig, which keeps a name's case: a plugin's
    ``DJANGO_SETTINGS_MODULE`` in setup.cfg is found under that name (rt's configparser lowercased it, and
    django-model-utils' 350 tests failed to find their settings)."""
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        project = write_files(
            tmp_path / name, {**CAPITAL_INI_NAME, name: f"[{section}]\nSETTINGS_MODULE = proj.settings\n"}
        )
        pytest_run = run_pytest(cwd=project)
        assert counts_from_pytest(pytest_run.stdout) == {"pass": 1}, pytest_run.stdout
        rt_run = run_cli("test", cwd=project)
        assert summary_counts(rt_run.stderr) == {"pass": 1}, rt_run.stderr


#: two options to one destination, as pytest-django's --nomigrations and --migrations, the first one given
SHARED_DESTINATION = {
    "conftest.py": """
        def pytest_addoption(parser):
            parser.addoption("--no-migrations", "--nomigrations", action="store_true", dest="nomigrations", default=False)
            parser.addoption("--migrations", action="store_false", dest="nomigrations", default=False)
    """,
    "test_options.py": """
        def test_the_given_option_wins(request):
            assert request.config.getoption("nomigrations") is True
    """,
    "pytest.ini": "[pytest]\naddopts = --nomigrations\n",
}


def test_an_option_given_is_not_undone_by_another_of_its_destination(tmp_path: Path) -> None:
    """argparse keeps the first default of a destination two options share, and the value the one given sets:
    rt set each option's default in turn, so ``--migrations`` (registered second) undid ``--nomigrations`` in
    addopts (django-extensions 4.1: its migrations ran, and one test failed)."""
    write_files(tmp_path, SHARED_DESTINATION)
    pytest_run = run_pytest(cwd=tmp_path)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 1}, pytest_run.stdout
    rt_run = run_cli("test", cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 1}, rt_run.stderr
