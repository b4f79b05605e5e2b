"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 17, sweep V: GraphQL, job queues and messaging, configuration frameworks, filesystem and processes):
each test names the suite that showed it, runs pytest itself on the same small project and compares the
outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files

#: a conftest.py in the manner of pytest-describe: each ``describe_*`` function is a block, a ``pytest.Module``
#: made of the function's locals; and in the manner of anyio's plugin, a test function under a collector marked
#: ``needs_resource`` (on itself or above it) gets the ``resource`` fixture
BLOCK_CONFTEST = """
import types

import pytest

USED = []


class Block(pytest.Module):
    # a block's namespace: the locals its function (a name of the collector above) returns

    def _getobj(self):
        namespace = types.ModuleType(self.name)
        namespace.__dict__.update(getattr(self.parent.obj, self.name)())
        return namespace

    def funcnamefilter(self, name):
        return not name.startswith("_")

    def classnamefilter(self, name):
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    if isinstance(obj, types.FunctionType) and name.startswith("describe_"):
        return Block.from_parent(collector, path=collector.path, name=name, nodeid=f"{collector.nodeid}::{name}")
    if collector.istestfunction(obj, name) and collector.get_closest_marker("needs_resource"):
        pytest.mark.usefixtures("resource")(obj)
    return None


@pytest.fixture
def resource():
    USED.append(1)
    return "resource"
"""


def test_a_block_inside_a_marked_module_sees_the_modules_marks(tmp_path: Path) -> None:
    """graphql-core 3.3.2: tests/pyutils/test_is_awaitable.py marks the module ``anyio`` (``pytestmark``) and
    holds pytest-describe blocks; anyio's plugin asks each block (a ``pytest.Module`` under the file's) for its
    closest ``anyio`` mark, found on the file's module node, and a coroutine test in a block parametrizes
    ``anyio_backend`` indirectly. rt's module node held the imported module without its marks, as pytest's
    ``obj`` property takes them, so the block saw no mark: a collection error ("function uses no fixture
    'anyio_backend'") and none of the file's tests ran. pytest 9.2: 4 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": BLOCK_CONFTEST,
            "test_blocks.py": """
            import pytest

            from conftest import USED

            pytestmark = pytest.mark.needs_resource


            def describe_block():
                def gets_it(request):
                    assert "resource" in request.fixturenames
                    assert request.node.get_closest_marker("needs_resource") is not None

                @pytest.mark.parametrize("resource", ["given"], indirect=True)
                def parametrizes_it(resource):
                    assert resource == "resource"

                def describe_inner():
                    def deeper(request):
                        assert "resource" in request.fixturenames

                    return locals()

                return locals()


            def test_at_the_top(request):
                assert "resource" in request.fixturenames
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "4 passed" in pytest_run.output, pytest_run.output
    assert "describe_block::parametrizes_it[given]" in rt_run.output or "4 pass" in rt_run.output, (
        rt_run.output
    )


def test_the_captured_streams_descriptor_is_made_with_the_real_os_functions(tmp_path: Path) -> None:
    """celery 5.7.0: t/unit/utils/test_platforms.py's ``test_DaemonContext.test_open`` patches ``os.open``
    (and ``os.close``, ``os.dup2``) with mocks, then opens a ``DaemonContext``, which asks ``sys.stdout`` and
    ``sys.stderr`` for their descriptors. pytest's captured streams are files it opened before the test; rt
    made the file when the test first asked, with ``tempfile``, through the patched ``os.open``: "TypeError:
    expected integer from opener", one failed more than pytest. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "test_daemon.py": """
            import builtins
            import os
            import sys
            from unittest import mock


            def test_descriptors_under_a_mocked_os_open():
                with mock.patch("os.open") as opened, mock.patch("os.close"):
                    descriptors = [stream.fileno() for stream in (sys.stdout, sys.stderr)]
                assert all(isinstance(fd, int) for fd in descriptors)
                opened.assert_not_called()
                print("after")


            def test_descriptor_under_a_mocked_open():
                with mock.patch("builtins.open", mock.mock_open()), mock.patch("io.open", mock.mock_open()):
                    fd = sys.stdout.fileno()
                assert isinstance(fd, int)
                os.write(fd, b"written to the descriptor")


            def test_output_after():
                print("plain")
                assert builtins.open is not None
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "3 passed" in pytest_run.output, pytest_run.output
