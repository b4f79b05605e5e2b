"""The repository's top-level conftest: every suite here opts into rt's pytest plugin.

``rt.testing`` gives the ``rt_kernel`` / ``rt_make_kernel`` / ``rt_register`` fixtures and an
``anyio_backend`` parametrized over asyncio and trio, so every ``@pytest.mark.anyio`` test runs on both. It
is opt-in (not a ``pytest11`` entry point) so that it does not change other projects' pytest runs.
"""

pytest_plugins = ["rt.testing"]
