"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 15, sweep S: scientific, numeric and geometry libraries, file formats and documents): each test
names the suite that showed it, runs pytest itself on the same small project and compares the outcome counts,
so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


def test_a_tests_fixture_values_are_freed_after_its_teardown(tmp_path: Path) -> None:
    """python-pptx 1.0.2 (``filterwarnings = error``): a test left a ``zipfile.ZipFile`` over an
    ``io.BytesIO`` open, held by its fixture's mock. pytest drops a test's fixture values after its teardown
    (``item.funcargs = None``), so the file was closed then, by its reference count. rt's set-up of the test
    and its request refer to each other, so the values waited for a garbage collection, which ran inside the
    next test, freed the ``BytesIO`` first, and the ``ZipFile``'s ``__del__`` raised "I/O operation on closed
    file": a ``PytestUnraisableExceptionWarning`` that failed that next test (1 failed where pytest has 0).
    Here each kind of fixture value (returned, yielded, one whose fixture added a finalizer, one a
    ``usefixtures`` fixture made, a parametrized one) is gone when the next test starts, with the garbage
    collector off as it is between two of its runs. pytest 9.2: 13 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nfilterwarnings = error\n",
            "conftest.py": """
                import gc

                import pytest

                freed = []


                class Probe:
                    def __init__(self, name):
                        self.name = name

                    def __del__(self):
                        freed.append(self.name)


                @pytest.fixture(autouse=True)
                def no_collection():
                    gc.disable()
                    yield
                    gc.enable()


                @pytest.fixture
                def returned():
                    return Probe("returned")


                @pytest.fixture
                def yielded():
                    probe = Probe("yielded")
                    yield probe
                    probe.name = "yielded, torn down"


                @pytest.fixture
                def finalized(request):
                    request.addfinalizer(lambda: None)
                    return Probe("finalized")


                @pytest.fixture
                def used():
                    return Probe("used")


                @pytest.fixture(params=["a", "b"])
                def param(request):
                    return Probe(request.param)
            """,
            "test_freed.py": """
                import pytest

                from conftest import freed


                def test_returned(returned):
                    assert freed == []


                def test_returned_is_freed():
                    assert freed == ["returned"]


                def test_yielded(yielded):
                    pass


                def test_yielded_is_freed():
                    assert freed[-1] == "yielded, torn down"


                def test_finalized(finalized, returned):
                    pass


                def test_finalized_is_freed():
                    assert sorted(freed[-2:]) == ["finalized", "returned"]


                @pytest.mark.usefixtures("used")
                def test_used():
                    pass


                def test_used_is_freed():
                    assert freed[-1] == "used"


                def test_param(param):
                    assert freed[-1] != param.name


                def test_params_are_freed():
                    assert freed[-2:] == ["a", "b"]
            """,
            "test_zipfile.py": """
                import gc
                import io
                import zipfile
                from unittest import mock

                import pytest


                @pytest.fixture
                def archive_prop(request):
                    patcher = mock.patch("zipfile.ZipFile.comment", new_callable=mock.PropertyMock)
                    request.addfinalizer(patcher.stop)
                    return patcher.start()


                def test_left_open(archive_prop):
                    archive_prop.return_value = zipfile.ZipFile(io.BytesIO(), "w")


                def test_next():
                    gc.collect()
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "13 passed" in pytest_run.output, pytest_run.output


def test_collect_ignore_is_read_when_a_path_is_collected(tmp_path: Path) -> None:
    """asdf 6.0.0: asdf/_jsonschema/conftest.py has ``collect_ignore_glob = []`` and a ``pytest_configure``
    that appends ``"*"`` unless its ``--jsonschema`` option is given, so pytest leaves the vendored
    jsonschema's tests out (2180 passed). rt copied a conftest.py's ``collect_ignore`` and
    ``collect_ignore_glob`` when it imported the file, before that hook ran, and ran 6,700 more tests. pytest
    reads them each time it asks whether a path is ignored, from the innermost conftest.py above it that has
    the name: a folder's own list (here an empty one) hides its parents'. pytest 9.2: 3 passed, and 5 with
    ``--with-sub``."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
                collect_ignore = ["pkg/other/test_w.py", "pkg/test_b.py"]


                def pytest_addoption(parser):
                    parser.addoption("--with-sub", action="store_true", default=False)
            """,
            "pkg/__init__.py": "",
            "pkg/test_a.py": "def test_a():\n    pass\n",
            "pkg/test_b.py": "def test_b():\n    pass\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/conftest.py": """
                collect_ignore_glob = []
                collect_ignore = []


                def pytest_configure(config):
                    if not config.option.with_sub:
                        collect_ignore_glob.append("*_x.py")
                        collect_ignore.append("test_y.py")
            """,
            "pkg/sub/test_x.py": "def test_x():\n    pass\n",
            "pkg/sub/test_y.py": "def test_y():\n    pass\n",
            "pkg/sub/test_z.py": "def test_z():\n    pass\n",
            "pkg/other/conftest.py": "collect_ignore = []\n",
            "pkg/other/test_w.py": "def test_w():\n    pass\n",
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "3 passed" in pytest_run.output, pytest_run.output
    pytest_run, _ = same_counts_as_pytest(tmp_path, "--with-sub")
    assert "5 passed" in pytest_run.output, pytest_run.output


def test_captured_stdout_is_read_back_after_a_seek(tmp_path: Path) -> None:
    """pyexcel 0.7.6: ``sheet.save_to_memory("csv", sys.stdout)`` writes the CSV to ``sys.stdout``, seeks to
    0 and returns the stream, which its tests read back (``stream.read() == "1\\r\\n"``). pytest's
    ``sys.stdout`` while it captures is a file holding the phase's output (its fd capture's temporary file),
    readable and seekable; rt's raised ``io.UnsupportedOperation: read`` (2 failed where pytest has 0). What
    a fixture printed in the set-up phase is not in the call phase's. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "test_read_back.py": """
                import sys

                import pytest


                @pytest.fixture
                def noisy():
                    print("set up")


                def test_read_back(noisy):
                    print("1")
                    sys.stdout.seek(0)
                    assert sys.stdout.read() == "1\\n"


                def test_read_part():
                    assert sys.stdout.readable() and sys.stdout.seekable()
                    sys.stdout.write("abc")
                    sys.stdout.seek(0)
                    assert sys.stdout.read(2) == "ab"
                    assert sys.stdout.read() == "c"


                def test_stderr():
                    sys.stderr.write("err")
                    sys.stderr.seek(0)
                    assert sys.stderr.read() == "err"
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "3 passed" in pytest_run.output, pytest_run.output
