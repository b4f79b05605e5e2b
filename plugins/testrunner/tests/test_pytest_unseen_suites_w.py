"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 17, sweep W: cloud SDKs and infrastructure clients, packaging tools, Django apps through
pytest-django, ORMs on SQLite): each test names the suite that showed it, runs pytest itself on the same small
project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


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
