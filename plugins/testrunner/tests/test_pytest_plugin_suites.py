"""``rt test`` on mechanisms found missing while running pytest plugins' own suites and other unseen projects
from their PyPI sdists (issue 15, session 9, sweep F): each test names the suite that showed it, runs pytest
itself on the same small project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: pytest's hint replaces the full diff of two containers only off CI: both runners see no CI
NO_CI = {"BUILD_NUMBER": ""}


def rt_test(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[dict[str, int], str]:
    """``rt test`` in ``root``: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=root, env={**NO_CI, **(env or {})}, timeout=180)
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, int]:
    """pytest's outcome counts in ``root``, in rt's words."""
    return counts_from_pytest(run_pytest(*args, cwd=root, env={**NO_CI, **(env or {})}).stdout)


def test_a_test_modules_pytest_plugins_serve_the_session_and_pytester_brings_testdir(tmp_path: Path) -> None:
    """pytest-mock 3.17.0: ``pytest_plugins = "pytester"`` sits in its test module, not in a conftest.py.
    pytest hands every module it imports to its plugin manager, so the plugin serves the whole session; and
    pytest's legacypath plugin answers pytester's registration with ``testdir`` (pytester's ``py.path``
    flavour). A plugin object registered with ``config.pluginmanager.register`` brings its fixtures too.
    pytest 9.2: 4 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            class Registered:
                @pytest.fixture
                def registered_value(self):
                    return 42

            def pytest_configure(config):
                config.pluginmanager.register(Registered(), "registered-by-conftest")
            """,
            "tests/test_plugin_module.py": """
            pytest_plugins = "pytester"

            def test_testdir_runs_pytest_inside(testdir):
                testdir.makepyfile("def test_x(): pass\\ndef test_y(): assert 0\\n")
                testdir.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1, failed=1)

            def test_testdir_paths_are_py_paths(testdir):
                assert testdir.tmpdir.check(dir=1)

            def test_fails(testdir):
                assert testdir.tmpdir.basename == "elsewhere"
            """,
            "tests/test_other_module.py": """
            def test_pytester_serves_every_module(pytester):
                assert pytester.path.is_dir()

            def test_a_registered_objects_fixture(registered_value):
                assert registered_value == 42
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 4, "fail": 1}
    found, output = rt_test(tmp_path)
    assert found == expected, output


def test_test_classes_inside_test_classes_are_collected(tmp_path: Path) -> None:
    """pytest-mock 3.17.0: ``class TestSpy`` holds ``class TestOnClass`` with tests of its own; pytest
    collects the inner class as the outer one's child (node ids ``TestSpy::TestOnClass::test_x``), with the
    outer class's marks and fixtures, and ``-k`` sees both names. pytest 9.2: 4 passed, 1 skipped, 1 xfailed
    (and with ``-k TestInner``: 2 passed, 1 skipped, 1 xfailed)."""
    write_files(
        tmp_path,
        {
            "test_nested.py": """
            import pytest

            @pytest.mark.outer
            class TestOuter:
                @pytest.fixture
                def outer_value(self):
                    return "outer"

                def test_outer(self, outer_value):
                    assert outer_value == "outer"

                class TestInner:
                    def test_sees_the_outer_fixture(self, outer_value, request):
                        assert outer_value == "outer"
                        assert request.node.get_closest_marker("outer") is not None
                        assert request.node.nodeid.endswith("TestOuter::TestInner::test_sees_the_outer_fixture")

                    @pytest.mark.xfail(reason="inner")
                    def test_xfails(self):
                        assert 0

                    @pytest.mark.skip(reason="inner")
                    def test_skipped(self):
                        pass

                    class TestInnermost:
                        def test_deep(self):
                            pass

                class NotATest:
                    def test_never_collected(self):
                        assert 0

            def test_module_level():
                pass
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 4, "skip": 1, "xfail": 1}
    found, output = rt_test(tmp_path)
    assert found == expected, output
    expected = pytest_counts(tmp_path, "-k", "TestInner")
    assert expected == {"pass": 2, "skip": 1, "xfail": 1}
    found, output = rt_test(tmp_path, "-k", "TestInner")
    assert found == expected, output


def _installed_plugin(site: Path) -> None:
    """A pytest plugin installed in ``site`` (a folder named as an environment's), with a ``pytest11``
    entry point and a RECORD, as a wheel installs it: its ``check_pair`` asserts with a bare ``assert``."""
    write_files(
        site,
        {
            "rt_sweep_plugin/__init__.py": """
            import pytest

            def check_pair(actual, expected):
                try:
                    assert actual == expected
                except AssertionError as exc:
                    raise AssertionError(f"pair differs: {exc}") from None

            @pytest.fixture
            def pair_checker():
                return check_pair
            """,
            "rt_sweep_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: rt-sweep-plugin\nVersion: 1.0\n",
            "rt_sweep_plugin-1.0.dist-info/entry_points.txt": "[pytest11]\nrt_sweep = rt_sweep_plugin\n",
            "rt_sweep_plugin-1.0.dist-info/RECORD": (
                "rt_sweep_plugin/__init__.py,,\nrt_sweep_plugin-1.0.dist-info/METADATA,,\n"
                "rt_sweep_plugin-1.0.dist-info/entry_points.txt,,\nrt_sweep_plugin-1.0.dist-info/RECORD,,\n"
            ),
        },
    )


def test_an_installed_plugins_asserts_are_rewritten(tmp_path: Path) -> None:
    """pytest-mock 3.17.0: its ``assert_called_with`` wrapper adds the explanation of its own rewritten
    ``assert actual_args == expect_args`` to the mock's message ("pytest introspection follows"). pytest
    rewrites the packages of every distribution with a ``pytest11`` entry point, installed or not, and after
    the explanation of two containers it prints ``Use -v to get more diff`` (off CI; the full diff on CI).
    pytest 9.2: 3 passed."""
    site = tmp_path / "env" / "site-packages"
    _installed_plugin(site)
    project = tmp_path / "project"
    write_files(
        project,
        {
            "test_uses_the_plugin.py": """
            import pytest

            def test_the_plugins_assert_explains_itself(pair_checker):
                with pytest.raises(AssertionError) as caught:
                    pair_checker((1, 2, 3), (1, 2, 4))
                assert "At index 2 diff: 3 != 4" in str(caught.value)
                assert "Use -v to get more diff" in str(caught.value)

            def test_one_more_item(pair_checker):
                with pytest.raises(AssertionError) as caught:
                    pair_checker([1, 2], [1])
                assert "Left contains one more item: 2" in str(caught.value)

            def test_two_more_items(pair_checker):
                with pytest.raises(AssertionError) as caught:
                    pair_checker([1], [1, 2, 3])
                assert "Right contains 2 more items, first extra item: 2" in str(caught.value)
            """,
        },
    )
    env = {"PYTHONPATH": str(site)}
    expected = pytest_counts(project, env=env)
    assert expected == {"pass": 3}
    found, output = rt_test(project, env=env)
    assert found == expected, output


def test_on_ci_the_full_diff_replaces_the_hint(tmp_path: Path) -> None:
    """pytest shows the full diff of two containers when ``CI`` (or ``BUILD_NUMBER``) is set, where no one
    can rerun with ``-v``. pytest 9.2: 1 passed, 1 failed, the same under rt."""
    write_files(
        tmp_path,
        {
            "test_ci.py": """
            def test_full_diff():
                try:
                    assert [1, 2, 3] == [1, 2, 4]
                except AssertionError as exc:
                    text = str(exc)
                assert "Full diff:" in text and "Use -v" not in text

            def test_shown():
                assert {"a": 1} == {"a": 2}
            """,
        },
    )
    env = {"CI": "1"}
    expected = pytest_counts(tmp_path, env=env)
    assert expected == {"pass": 1, "fail": 1}
    found, output = rt_test(tmp_path, env=env)
    assert found == expected, output
    assert "Full diff: (-: missing in left side, +: extra in left side)" in output


def test_a_rewritten_helper_module_keeps_its_namespace(tmp_path: Path) -> None:
    """typing-extensions 4.16.0: its test compares the public names of ``typing_extensions`` (a module next
    to the test file, which rt rewrites as one of the suite's helpers and pytest leaves alone) with its
    ``__all__``. The names rt's rewritten asserts use are not added to the helper's namespace. A test file's
    own asserts (and the helper's) still explain themselves. pytest 9.2: 2 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "src/helper_module.py": """
            __all__ = ["public", "check"]

            def public():
                return 1

            def check(value):
                assert value == 1
            """,
            "src/test_names.py": """
            import helper_module
            import pytest

            def test_public_names_are_all():
                names = {name for name in dir(helper_module) if not name.startswith("_")}
                assert names == set(helper_module.__all__)

            def test_the_helpers_assert_still_works():
                helper_module.check(1)
                with pytest.raises(AssertionError):
                    helper_module.check(2)

            def test_fails():
                assert helper_module.public() == 2
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 2, "fail": 1}
    found, output = rt_test(tmp_path)
    assert found == expected, output
    assert "assert helper_module.public() == 2" in output
