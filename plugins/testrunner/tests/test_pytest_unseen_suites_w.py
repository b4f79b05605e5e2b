"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 17, sweep W: cloud SDKs and infrastructure clients, packaging tools, Django apps through
pytest-django, ORMs on SQLite): each test names the suite that showed it, runs pytest itself on the same small
project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import (
    counts_from_pytest,
    run_cli,
    run_pytest,
    same_counts_as_pytest,
    summary_counts,
    write_files,
)


def test_a_sync_fixture_returning_a_coroutine_has_it_for_its_value(tmp_path: Path) -> None:
    """google-auth 2.63.0: tests/transport/aio/test_sessions.py's ``simple_async_task`` and
    ``mocked_content`` are plain ``def`` fixtures that return a coroutine or an async generator, which the
    async tests then await or iterate themselves (to avoid pytest's "requested an async fixture" error). pytest
    tells an async fixture by its function, so their value is that object; rt looked at the value and, no
    plugin claiming the fixture, failed the set-up (5 errors more than pytest). pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "test_values.py": """
            import inspect

            import pytest


            @pytest.fixture
            def task():
                async def inner():
                    return True

                coroutine = inner()
                yield coroutine
                coroutine.close()


            @pytest.fixture
            def chunks():
                async def inner():
                    yield b"a"

                return inner()


            @pytest.fixture
            def both(task, chunks):
                return task, chunks


            def test_coroutine(task):
                assert inspect.iscoroutine(task)


            def test_async_generator(chunks):
                assert inspect.isasyncgen(chunks)


            def test_through_another_fixture(both):
                assert inspect.iscoroutine(both[0]) and inspect.isasyncgen(both[1])
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "3 passed" in pytest_run.output, pytest_run.output
    assert "3 pass" in rt_run.output, rt_run.output


#: an installed plugin that sets the application up from ``DJANGO_SETTINGS_MODULE`` alone, as pytest-django does
SETTINGS_PLUGIN = {
    "djsettings_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: djsettings-plugin\nVersion: 1.0\n",
    "djsettings_plugin-1.0.dist-info/entry_points.txt": "[pytest11]\ndjsettings = djsettings_plugin\n",
    "djsettings_plugin.py": """
        import os

        def pytest_configure(config):
            if os.environ.get("DJANGO_SETTINGS_MODULE"):
                os.environ["CONFIGURED"] = os.environ["DJANGO_SETTINGS_MODULE"]
    """,
}


def test_the_django_settings_variable_loads_the_plugins_of_a_suite_that_never_imports_pytest(
    tmp_path: Path,
) -> None:
    """django-import-export 4.4.3 as its tox.ini runs it (``DJANGO_SETTINGS_MODULE=settings``, Django's own
    ``TestCase`` classes, no pytest configuration, no conftest.py, no module importing pytest): pytest loads
    pytest-django, which sets Django up from that variable before any test module is imported; rt loaded no
    plugin, so every module importing Django's models was a collection error (45 errors; pytest 718 passed).
    pytest 9.2: 2 passed."""
    site = write_files(tmp_path / "site", SETTINGS_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "core/__init__.py": "",
            "core/tests/__init__.py": "",
            "core/tests/test_models.py": """
                import os
                import unittest

                SETTINGS = os.environ["CONFIGURED"]  # the application is set up before any module imports


                class ModelTests(unittest.TestCase):
                    def test_settings(self):
                        self.assertEqual(SETTINGS, "settings")

                    def test_again(self):
                        self.assertIn("CONFIGURED", os.environ)
            """,
        },
    )
    env = {"PYTHONPATH": str(site), "DJANGO_SETTINGS_MODULE": "settings"}
    pytest_run = run_pytest("core", cwd=project, env=env)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 2}, pytest_run.output
    rt_run = run_cli("test", "core", cwd=project, env=env)
    assert summary_counts(rt_run.stderr) == {"pass": 2}, rt_run.output


def test_an_asserted_identity_with_a_literal_gives_no_syntax_warning(tmp_path: Path) -> None:
    """azure-core 1.41.0: tests/test_rest_headers.py asserts ``h.get("nope", default="default") is
    "default"``. pytest's rewrite holds each operand of the comparison in a name, so compiling the module
    warns of no ``"is" with a literal``; rt kept the literal in the rewritten comparison and showed that
    SyntaxWarning (31 warnings, pytest 29). Outside an assert both show it. pytest 9.2: 2 passed, 1 warning."""
    write_files(
        tmp_path,
        {
            "test_literal.py": """
            def helper(value):
                return value is "y"


            def test_identity():
                value = None
                assert value is not "default"
                assert "x" is not value is not 1


            def test_helper():
                assert not helper("z")
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "2 passed, 1 warning" in pytest_run.output, pytest_run.output
    assert rt_run.output.count("SyntaxWarning") == 1, rt_run.output


def test_the_frames_under_a_test_have_locals_of_a_small_repr(tmp_path: Path) -> None:
    """django-debug-toolbar 8.0.0: its SQL panel, with stack-trace locals on, formats the locals of every
    frame under each query, the runner's too. rt's frames held lists of its tests and suites, whose generated
    reprs spelled out the whole tree (78 MB of text for a file of 200 tests, 5 s for one query): the suite's
    test_insert_locals took 5 s alone and the whole run did not end in 10 minutes (pytest: 67 s). pytest's
    nodes have short reprs (``<Function test_x>``); rt's tests and suites now too. pytest 9.2: 151 passed."""
    tests = "".join(f"\n\n            def test_n{number}():\n                pass\n" for number in range(150))
    write_files(
        tmp_path,
        {
            "test_locals.py": """
            import sys
            from pprint import pformat


            def test_locals_of_the_frames_below():
                frame, size = sys._getframe(), 0
                while frame is not None:
                    size += len(pformat(frame.f_locals))
                    frame = frame.f_back
                assert size < 2_000_000
            """
            + tests,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "151 passed" in pytest_run.output, pytest_run.output


def test_an_option_no_plugin_registers_is_named_as_asked(tmp_path: Path) -> None:
    """django-polymorphic at its GitHub head (4.11.3): its conftest.py's ``pytest_configure`` asks for
    pytest-playwright's ``--headed``, which, without that plugin, is pytest's ``ValueError: no option named
    '--headed'``; rt named it ``'headed'``. A test here compares the message. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "test_options.py": """
            import pytest


            def test_dashed(request):
                with pytest.raises(ValueError, match="^no option named '--headed'$"):
                    request.config.getoption("--headed")


            def test_plain(request):
                with pytest.raises(ValueError, match="^no option named 'headed'$"):
                    request.config.getoption("headed")
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "2 passed" in pytest_run.output, pytest_run.output
