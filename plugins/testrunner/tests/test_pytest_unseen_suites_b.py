"""``rt test`` on mechanisms found missing while running unseen projects' suites from their PyPI sdists
(issue 15, session 8's sweep B): each test names the suite that showed it, runs pytest itself on the same
small project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """``rt test`` in ``root``: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=root, timeout=180)
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str) -> dict[str, int]:
    """pytest's outcome counts in ``root``, in rt's words."""
    return counts_from_pytest(run_pytest(*args, cwd=root).stdout)


def test_captured_stdin_is_a_pseudo_file_without_a_descriptor(tmp_path: Path) -> None:
    """sh 2.4.0: ``sh.python(..., _in=sys.stdin)`` asks the stream for its ``fileno()`` and takes
    ``io.UnsupportedOperation`` for "no descriptor", as pytest's captured stdin raises; reading still raises
    OSError, and the stream says it is neither readable, seekable nor a terminal. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "test_stdin.py": """
            import io
            import sys

            import pytest

            def descriptor(stream):
                try:
                    return stream.fileno()
                except io.UnsupportedOperation:
                    return None

            def test_no_descriptor():
                assert descriptor(sys.stdin) is None

            def test_what_it_answers():
                assert (sys.stdin.readable(), sys.stdin.seekable(), sys.stdin.isatty()) == (False, False, False)
                for call in (sys.stdin.tell, sys.stdin.flush, lambda: sys.stdin.seek(0)):
                    with pytest.raises(io.UnsupportedOperation):
                        call()
                sys.stdin.close()
                assert not sys.stdin.closed

            def test_reading_still_fails():
                with pytest.raises(OSError, match="stdin"):
                    sys.stdin.read()
                with pytest.raises(OSError):
                    sys.stdin.readline()
            """,
        },
    )
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"pass": 3}, output


def test_warning_filters_and_ini_overrides_on_the_command_line(tmp_path: Path) -> None:
    """requests-toolbelt 1.0.0: its tox.ini runs ``pytest -W error::DeprecationWarning``; ``-W`` and
    ``-o name=value`` given to ``rt test`` win over the configuration and its addopts, as pytest's command
    line does (``-o addopts=...`` replaces the addopts). pytest 9.2: 1 passed, 2 failed; 2 passed,
    1 failed and 1 xpassed with ``-o addopts=``."""
    write_files(
        tmp_path,
        {
            "pytest.ini": """
            [pytest]
            addopts = -m "not slow"
            filterwarnings = ignore::UserWarning
            markers = slow
            """,
            "test_warns.py": """
            import warnings

            import pytest

            def test_deprecated():
                warnings.warn("old", DeprecationWarning)

            def test_user_warning_stays_ignored():
                warnings.warn("mine", UserWarning)

            @pytest.mark.xfail(reason="passes")
            def test_xpass():
                pass

            @pytest.mark.slow
            def test_slow():
                pass
            """,
        },
    )
    given = ("-W", "error::DeprecationWarning", "-o", "xfail_strict=true")
    found, output = rt_test(tmp_path, *given)
    assert found == pytest_counts(tmp_path, *given) == {"pass": 1, "fail": 2}, output
    found, output = rt_test(tmp_path, "--pythonwarnings=error::DeprecationWarning", "--override-ini=addopts=")
    expected = pytest_counts(
        tmp_path, "--pythonwarnings=error::DeprecationWarning", "--override-ini=addopts="
    )
    assert found == expected == {"pass": 2, "fail": 1, "xpass": 1}, output


def test_an_override_without_a_value_is_a_usage_error(tmp_path: Path) -> None:
    write_files(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    result = run_cli("test", "-o", "xfail_strict", cwd=tmp_path)
    assert result.code != 0
    assert "-o/--override-ini expects option=value style (got: 'xfail_strict')" in result.stderr, (
        result.output
    )


def test_tempfile_tempdir_is_set_when_tests_run_with_capture(tmp_path: Path) -> None:
    """requests-toolbelt 1.0.0: ``get_download_file_path(r, tempfile.tempdir)``; pytest's default capture
    opens a temporary file, which fills ``tempfile.tempdir``, so it is a path when the tests run (with
    ``-s`` it stays None). pytest 9.2: 1 passed; 1 failed with ``-s``."""
    write_files(
        tmp_path,
        {
            "test_tempdir.py": """
            import os
            import tempfile

            def test_tempdir_is_a_folder():
                assert tempfile.tempdir is not None and os.path.isdir(tempfile.tempdir)
            """,
        },
    )
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"pass": 1}, output
    found, output = rt_test(tmp_path, "-s")
    assert found == pytest_counts(tmp_path, "-s") == {"fail": 1}, output


def test_fixtures_are_set_up_widest_scope_first(tmp_path: Path) -> None:
    """cachelib 0.17.0: a class's ``usefixtures("memcached_server")`` (class scope) skips with
    ``importorskip`` before the function-scoped autouse fixture that connects to the server runs, as pytest
    sets up a test's fixtures in its ``fixturenames`` order: depth first from the autouse, usefixtures and
    requested names, then the widest scope first. pytest 9.2: 2 passed, 1 skipped."""
    write_files(
        tmp_path,
        {
            "test_order.py": """
            import pytest

            ORDER = []

            @pytest.fixture(scope="class")
            def server():
                pytest.skip("no server here")

            @pytest.fixture(scope="class")
            def klass():
                ORDER.append("class")

            @pytest.fixture(scope="module")
            def mod():
                ORDER.append("module")

            @pytest.fixture(scope="module")
            def inner():
                ORDER.append("inner")

            @pytest.fixture
            def func(inner):
                ORDER.append("func")

            @pytest.fixture(autouse=True)
            def connect(request):
                if request.cls is TestNeedsServer:
                    raise ConnectionError("the server fixture should have skipped first")
                ORDER.append("auto")

            @pytest.mark.usefixtures("server")
            class TestNeedsServer:
                def test_skipped(self):
                    pass

            @pytest.mark.usefixtures("klass")
            class TestOrder:
                def test_order(self, func, mod, request):
                    assert ORDER == ["inner", "module", "class", "auto", "func"], ORDER
                    # fixturenames has the installed plugins' autouse fixtures too (and `request` they ask for)
                    mine = ["inner", "mod", "klass", "connect", "func"]
                    assert [name for name in request.fixturenames if name in mine] == mine

            def test_plain():
                pass
            """,
        },
    )
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"pass": 2, "skip": 1}, output


def test_parametrize_ids_follow_pytests_rules(tmp_path: Path) -> None:
    """portalocker 4.4.2: ``parametrize("source", EXAMPLES)`` over README snippets longer than 100 characters
    is ``test_readme_python_example[source0]`` under pytest 9 (``parametrize_long_str_id_strategy``, default
    ``short``), not the escaped text. Also pytest's escaping (a backslash doubled, control characters as
    ``\\x..``), any object with a ``__name__`` (a builtin, a module), ``ids=`` entries and an ``ids``
    callable's answers escaped or named by the same rules, ``pytest.HIDDEN_PARAM``, and duplicate ids
    numbered around ids already taken. Each test records its name; the lists must be pytest's."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            @pytest.fixture(autouse=True)
            def record(request):
                with open("names.txt", "a", encoding="utf-8") as names:
                    names.write(request.node.name + "\\n")
            """,
            "test_ids.py": """
            import os

            import pytest

            LONG = "x" * 101

            @pytest.mark.parametrize("s", [LONG, "y" * 100, "a\\\\b", "\\x00\\x7f", "é", b"\\xff\\\\", len, os])
            def test_values(s):
                pass

            @pytest.mark.parametrize("n", [1, 2, 3], ids=["é", 3, None])
            def test_given(n):
                pass

            @pytest.mark.parametrize("n", [1, 2], ids=lambda value: 7 if value == 1 else object())
            def test_callable(n):
                pass

            @pytest.mark.parametrize("v", [pytest.param("x", id="ü"), pytest.param(1, id=pytest.HIDDEN_PARAM)])
            def test_params(v):
                pass

            @pytest.mark.parametrize("v", ["a", "a", "a0", "b1", "b1"])
            def test_duplicates(v):
                pass
            """,
        },
    )

    def names(*args: str, runner: str) -> list[str]:
        (tmp_path / "names.txt").unlink(missing_ok=True)
        if runner == "pytest":
            run_pytest(*args, cwd=tmp_path)
        else:
            rt_test(tmp_path, *args)
        return sorted((tmp_path / "names.txt").read_text(encoding="utf-8").splitlines())

    expected = names(runner="pytest")
    assert "test_values[s0]" in expected and "test_values[a\\\\b]" in expected, expected
    assert names(runner="rt") == expected
    sha = ("-o", "parametrize_long_str_id_strategy=sha256")
    expected = names(*sha, runner="pytest")
    assert any(len(name) == len("test_values[]") + 64 for name in expected), expected
    assert names(*sha, runner="rt") == expected


def test_blocking_pytests_warnings_plugin_leaves_the_filters_alone(tmp_path: Path) -> None:
    """dogpile.cache 1.5.0: ``addopts = ... -p no:warnings`` with ``filterwarnings = error``: without its
    warnings plugin pytest applies neither the ini's filters nor the marks' (a warning at import or in a test
    is no error), and does not restore the filters after a test, so one a test sets stays for the next.
    pytest 9.2: 4 passed, 1 failed; with the plugin, the import's warning is a collection error."""
    files = {
        "pytest.ini": """
        [pytest]
        addopts = -p no:warnings
        filterwarnings = error
        """,
        "test_warnings.py": """
        import warnings

        import pytest

        warnings.warn("at import", UserWarning)

        def test_ini_filter_not_applied():
            warnings.warn("x", UserWarning)

        @pytest.mark.filterwarnings("error")
        def test_mark_not_applied():
            warnings.warn("y", UserWarning)

        def test_recwarn_still_records(recwarn):
            warnings.warn("z", DeprecationWarning)
            assert len(recwarn) == 1

        def test_sets_a_filter():
            warnings.simplefilter("error", RuntimeWarning)

        def test_the_filter_stayed():
            warnings.warn("w", RuntimeWarning)
        """,
    }
    write_files(tmp_path, files)
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"pass": 4, "fail": 1}, output
    write_files(tmp_path, {"pytest.ini": "[pytest]\nfilterwarnings = error\n"})
    found, output = rt_test(tmp_path, "--continue-on-collection-errors")
    assert found == pytest_counts(tmp_path, "--continue-on-collection-errors") == {"error": 1}, output


def test_strict_turns_on_strict_xfail(tmp_path: Path) -> None:
    """stamina 26.1.0: ``[tool.pytest] strict = true``, pytest 9's switch for every strictness, makes an
    xfail mark without ``strict=`` strict (an unexpected pass fails), as ``strict_xfail`` (pytest 9's name of
    ``xfail_strict``) does; an explicit ``strict_xfail = false`` wins. pytest 9.2: 1 failed, 1 xfailed; then
    1 xpassed, 1 xfailed."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest]\nstrict = true\n",
            "test_xfail.py": """
            import pytest

            @pytest.mark.xfail(reason="passes after all")
            def test_passes():
                pass

            @pytest.mark.xfail(reason="fails")
            def test_fails():
                raise ValueError
            """,
        },
    )
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"fail": 1, "xfail": 1}, output
    write_files(tmp_path, {"pyproject.toml": "[tool.pytest]\nstrict = true\nstrict_xfail = false\n"})
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"xpass": 1, "xfail": 1}, output


def test_captured_streams_are_not_picklable(tmp_path: Path) -> None:
    """dill 0.4.1: its test_registered.py copies a ``PrettyPrinter`` and a ``StreamHandler`` (both holding
    ``sys.stdout``/``sys.stderr``) and expects dill to fail on them, as it fails on pytest's capture files;
    dill pickles the process's own ``sys.__stdout__`` by name, so rt's stand-ins must refuse to be pickled as
    every stream does. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "test_pickle.py": """
            import copyreg
            import pickle
            import sys

            import pytest

            def test_streams_refuse_to_reduce():
                for stream in (sys.stdout, sys.stderr, sys.stdout.buffer, sys.stderr.buffer):
                    with pytest.raises(TypeError):
                        stream.__reduce_ex__(2)

            def test_a_pickler_that_names_the_real_streams_still_fails():
                class Named(pickle.Pickler):  # dill's way with the process's own streams
                    def reducer_override(self, obj):
                        if obj is sys.__stdout__ or obj is sys.__stderr__:
                            return getattr, (sys, "__stdout__" if obj is sys.__stdout__ else "__stderr__")
                        return NotImplemented

                import io
                with pytest.raises(TypeError):
                    Named(io.BytesIO()).dump({"stream": sys.stdout})
            """,
        },
    )
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"pass": 2}, output
