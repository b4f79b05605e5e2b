"""`rt run script.py` / `rt script.py`: runs a program as `python script.py`, with rt's error reports."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rt.kernel import Kernel
from rt_debug.runner import run_script

STACK_LINE = re.compile(r"^    at (?:(?P<name>.+) \()?(?P<file>.+):(?P<line>\d+):(?P<column>\d+)\)?$")


def _script(directory: Path, body: str, name: str = "script.py") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def _rt_environ(**extra: str) -> dict[str, str]:
    """The environment of a real `rt` process: no RT_* from outside, and only this plugin loaded.

    The other plugins are disabled so that this plugin's tests do not depend on theirs being importable.
    """
    others = sorted({ep.name for ep in importlib.metadata.entry_points(group="rt")} - {"debug"})
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    environ.update({"RT_DISABLE_PLUGINS": ",".join(others), "NO_COLOR": "1", **extra})
    return environ


def _rt(*args: str, cwd: Path, stdin: str | None = None, **environ: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rt", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        env=_rt_environ(**environ),
        timeout=60,
    )


@pytest.fixture(autouse=True)
def _kernel(rt_kernel: Kernel) -> Kernel:
    return rt_kernel


# -- like `python script.py` -------------------------------------------------------------------------------


def test_argv_main_file_and_path0_are_those_of_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _script(tmp_path, "VALUE = 'sibling module'\n", name="helper_mod_for_rt_run.py")
    script = _script(
        tmp_path,
        """
        import sys, helper_mod_for_rt_run
        print(repr(sys.argv))
        print(__name__, __file__)
        print(sys.path[0])
        print(helper_mod_for_rt_run.VALUE)
    """,
    )
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        assert run_script(str(script), ["a", "--flag", "b c"]) == 0
    finally:
        sys.modules.pop("helper_mod_for_rt_run", None)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == repr([str(script), "a", "--flag", "b c"])
    assert out[1] == f"__main__ {script}"
    assert out[2] == str(tmp_path)
    assert out[3] == "sibling module"
    assert sys.argv == saved_argv and sys.path == saved_path  # restored for the caller


@pytest.mark.parametrize(
    ("body", "code", "stderr"),
    [
        ("pass", 0, ""),
        ("import sys; sys.exit()", 0, ""),
        ("import sys; sys.exit(3)", 3, ""),
        ("raise SystemExit(0)", 0, ""),
        ("import sys; sys.exit('fatal: no config')", 1, "fatal: no config\n"),
    ],
)
def test_exit_codes_follow_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, code: int, stderr: str
) -> None:
    assert run_script(str(_script(tmp_path, body))) == code
    assert capsys.readouterr().err == stderr


def test_missing_script_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_script(str(tmp_path / "nope.py")) == 2
    assert "can't open file" in capsys.readouterr().err


# -- unhandled exceptions ----------------------------------------------------------------------------------

FAILING = """\
import json


def parse(text):
    data = json.loads(text)
    return data["items"][0]


def main():
    return parse('{"items": []}')


main()
"""


def test_unhandled_exception_prints_preview_message_and_v8_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(tmp_path, FAILING)
    assert run_script(str(script)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[:4] == [
        "4 | def parse(text):",
        "5 |     data = json.loads(text)",
        '6 |     return data["items"][0]',
        " " * len("6 |     return ") + "^" * len('data["items"][0]'),
    ]
    assert err[4] == "IndexError: list index out of range"
    assert err[5:] == [
        f"    at parse ({script}:6:12)",
        f"    at main ({script}:10:12)",
        f"    at {script}:13:1",  # module-level code has no function name, as in V8
    ]


def test_unhandled_exception_in_an_async_task_is_reported_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], anyio_backend: str
) -> None:
    script = _script(
        tmp_path,
        """\
        import anyio
        import rt.backend


        async def worker():
            await anyio.sleep(0)
            raise RuntimeError("task failed")


        async def main():
            async with anyio.create_task_group() as group:
                group.start_soon(worker)


        rt.backend.run(main)
    """,
    )
    assert run_script(str(script), backend=anyio_backend) == 1
    err = capsys.readouterr().err
    assert "[1/1] in the exception group above:" in err
    assert "RuntimeError: task failed" in err
    assert f"    at async worker ({script}:7:5)" in err
    assert '7 |     raise RuntimeError("task failed")' in err
    assert "    " + " " * len("7 | ") + "^" * len('raise RuntimeError("task failed")') in err


def test_exception_in_a_thread_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(
        tmp_path,
        """\
        import threading

        def work():
            raise ValueError("in thread")

        thread = threading.Thread(target=work, name="worker-1")
        thread.start()
        thread.join()
    """,
    )
    assert run_script(str(script)) == 0  # as python: a thread's exception does not change the exit code
    err = capsys.readouterr().err
    assert "Exception in thread worker-1:" in err
    assert "ValueError: in thread" in err
    assert f"    at work ({script}:4:5)" in err


def test_syntax_error_points_at_the_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(tmp_path, "x = 1\ny = (1 +\n")
    assert run_script(str(script)) == 1
    err = capsys.readouterr().err
    assert "2 | y = (1 +" in err
    assert "SyntaxError: '(' was never closed" in err


# -- the real `rt` command ---------------------------------------------------------------------------------


def test_rt_script_and_rt_run_script_run_the_program(tmp_path: Path) -> None:
    _script(
        tmp_path,
        """\
        import sys
        print(sys.argv, __name__, __file__)
        sys.exit(int(sys.argv[1]))
    """,
    )
    for command in (["script.py"], ["run", "script.py"]):
        result = _rt(*command, "7", "--backend", "x", cwd=tmp_path)
        assert result.returncode == 7, result.stderr
        # argv[0] as typed, __file__ absolute (as python 3.9+); flags after the script are the script's own
        assert result.stdout == f"['script.py', '7', '--backend', 'x'] __main__ {tmp_path / 'script.py'}\n"


def test_rt_run_runs_a_folder_with_main(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    _script(app, "import sys\nprint(sys.argv, __name__)\nraise SystemExit(4)\n", name="__main__.py")
    result = _rt("run", "app", "x", cwd=tmp_path)
    assert result.returncode == 4, result.stderr
    assert result.stdout == "['app', 'x'] __main__\n"


def test_rt_run_leaves_stdin_to_the_script(tmp_path: Path) -> None:
    _script(tmp_path, "import sys\nprint(sys.stdin.read().upper(), end='')\n")
    result = _rt("script.py", cwd=tmp_path, stdin="hello\nworld\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "HELLO\nWORLD\n"


BACKEND_PROBE = """\
import sniffio
import rt.backend


async def main():
    return sniffio.current_async_library()


print(rt.backend.run(main))
"""


def test_backend_flag_reaches_the_script(tmp_path: Path) -> None:
    _script(tmp_path, BACKEND_PROBE)
    assert _rt("script.py", cwd=tmp_path).stdout == "asyncio\n"
    assert _rt("run", "--backend", "trio", "script.py", cwd=tmp_path).stdout == "trio\n"
    assert _rt("--backend", "trio", "script.py", cwd=tmp_path).stdout == "trio\n"


def test_backend_from_config_reaches_the_script(tmp_path: Path) -> None:
    _script(tmp_path, BACKEND_PROBE)
    (tmp_path / "rt.toml").write_text('backend = "trio"\n', encoding="utf-8")
    assert _rt("script.py", cwd=tmp_path).stdout == "trio\n"
    assert _rt("--backend", "asyncio", "script.py", cwd=tmp_path).stdout == "asyncio\n"


def test_rt_command_reports_an_unhandled_exception(tmp_path: Path) -> None:
    script = _script(tmp_path, FAILING)
    result = _rt("script.py", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert "IndexError: list index out of range" in lines
    frames = [line for line in lines if STACK_LINE.match(line)]
    assert frames == [
        f"    at parse ({script}:6:12)",
        f"    at main ({script}:10:12)",
        f"    at {script}:13:1",
    ]
    assert "Traceback" not in result.stderr


# -- never less than python's traceback ----------------------------------------------------------------------


def _rt_run_error(tmp_path: Path, body: str, **files: str) -> tuple[Path, str]:
    """Run ``body`` as script.py under the real `rt` command; its stderr, which must be an error report."""
    for name, text in files.items():
        _script(tmp_path, text, name=f"{name}.py")
    script = _script(tmp_path, body)
    result = _rt("script.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback (most recent call last)" not in result.stderr
    return script, result.stderr


def test_exception_notes_are_shown(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path,
        """\
        error = ValueError("bad port")
        error.add_note("while reading config.toml, line 3")
        error.add_note("hint: ports are 1-65535")
        raise error
    """,
    )
    lines = err.splitlines()
    assert "ValueError: bad port" in lines
    assert lines[-2:] == ["while reading config.toml, line 3", "hint: ports are 1-65535"]


def test_syntax_error_gives_the_full_path_line_and_column(tmp_path: Path) -> None:
    script, err = _rt_run_error(tmp_path, "x = 1\ny = (1 +\n")
    lines = err.splitlines()
    assert "SyntaxError: '(' was never closed" in lines  # without python's "(script.py, line 2)" basename
    assert f"    at {script}:2:5" in lines


def test_syntax_error_in_an_imported_module_names_that_module_and_the_import(tmp_path: Path) -> None:
    script, err = _rt_run_error(
        tmp_path, "import broken_mod_for_rt_run\n", broken_mod_for_rt_run="def f(:\n    pass\n"
    )
    lines = err.splitlines()
    assert f"    at {tmp_path / 'broken_mod_for_rt_run.py'}:1:7" in lines
    assert f"    at {script}:1:1" in lines  # the import that loaded it
    assert "1 | def f(:" in lines


def test_cause_and_context_chains_are_shown_whole(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path,
        """\
        def step(n):
            if n == 0:
                raise KeyError("root")
            try:
                step(n - 1)
            except Exception as exc:
                if n % 2:
                    raise RuntimeError(f"level {n}") from exc
                raise RuntimeError(f"level {n}")

        step(7)
    """,
    )
    positions = [
        err.index(text) for text in ["KeyError: 'root'", *(f"RuntimeError: level {n}" for n in range(1, 8))]
    ]
    assert positions == sorted(positions)  # every link, oldest first, as python prints them
    assert err.count("The above exception was the direct cause of:") == 4
    assert err.count("While handling the above exception, another one was raised:") == 3


def test_nested_exception_groups_show_every_member_with_its_chain(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path,
        """\
        def inner():
            try:
                raise OSError("disk")
            except OSError as exc:
                raise ValueError("parse") from exc

        errors = []
        try:
            inner()
        except ValueError as exc:
            errors.append(exc)
        raise ExceptionGroup("outer", [TypeError("t"), ExceptionGroup("inner", [*errors, KeyError("k")])])
    """,
    )
    lines = err.splitlines()
    assert "ExceptionGroup: outer (2 sub-exceptions)" in lines
    assert "  [1/2] in the exception group above:" in lines
    assert "  TypeError: t" in lines
    assert "  ExceptionGroup: inner (2 sub-exceptions)" in lines
    assert "    [1/2] in the exception group above:" in lines
    assert "    OSError: disk" in lines  # the member's cause
    assert "    The above exception was the direct cause of:" in lines
    assert "    ValueError: parse" in lines
    assert "    KeyError: 'k'" in lines


def test_library_frames_are_folded_and_do_not_push_user_frames_out(tmp_path: Path) -> None:
    script, err = _rt_run_error(
        tmp_path,
        """\
        import copy


        class Leaf:
            def __deepcopy__(self, memo):
                raise RuntimeError("cannot copy a leaf")


        def nest(depth):
            value = Leaf()
            for _ in range(depth):
                value = [value]
            return value


        def level(n):
            if n == 0:
                return copy.deepcopy(nest(12))
            return level(n - 1)


        level(4)
    """,
    )
    frames = [line for line in err.splitlines() if STACK_LINE.match(line)]
    # python shows ~30 frames, most in copy.py; rt keeps every user frame and folds copy's into one line
    assert frames == [
        f"    at Leaf.__deepcopy__ ({script}:6:9)",
        *[f"    at level ({script}:18:16)"],
        *[f"    at level ({script}:19:12)"] * 4,
        f"    at {script}:22:1",
    ]
    folded = [line for line in err.splitlines() if line.startswith("    ... ")]
    assert len(folded) == 1 and folded[0].endswith(" frames in copy")
    assert int(folded[0].split()[1]) >= 12


def test_event_loop_and_rt_frames_never_appear(tmp_path: Path) -> None:
    script, err = _rt_run_error(
        tmp_path,
        """\
        import rt.backend


        async def fetch_user(n):
            if n == 0:
                raise LookupError("no such user")
            return await fetch_user(n - 1)


        async def main():
            await fetch_user(3)


        rt.backend.run(main)
    """,
    )
    files = {m["file"] for line in err.splitlines() if (m := STACK_LINE.match(line))}
    assert files == {str(script)}
    assert "rt_debug" not in err and "/rt/" not in err
    assert all(
        line.startswith("    ... ") for line in err.splitlines() if "asyncio" in line
    )  # folded, never shown
    frames = [line for line in err.splitlines() if STACK_LINE.match(line)]
    assert frames[:4] == [
        f"    at async fetch_user ({script}:6:9)",
        *[f"    at async fetch_user ({script}:7:12)"] * 3,
    ]
    assert frames[4] == f"    at async main ({script}:11:5)"


def test_deep_user_recursion_says_how_many_frames_are_not_shown(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path,
        """\
        def down(n):
            if n == 0:
                raise ValueError("bottom")
            down(n - 1)

        down(30)
    """,
    )
    frames = [line for line in err.splitlines() if STACK_LINE.match(line)]
    assert len(frames) == 10
    assert err.splitlines()[-1] == "    ... 22 more frames"  # 31 calls of down and the module


def test_an_installed_excepthook_is_called_instead_of_the_report(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path,
        """\
        import sys
        import traceback


        def hook(kind, value, tb):
            files = [frame.filename for frame in traceback.extract_tb(tb)]
            print(f"HOOK {kind.__name__}: {value} frames={files}", file=sys.stderr)


        sys.excepthook = hook


        def fail():
            raise ValueError("for the hook")


        fail()
    """,
    )
    script = str(tmp_path / "script.py")
    assert err == f"HOOK ValueError: for the hook frames={[script, script]}\n"  # rt's own frames left out


def test_a_failing_excepthook_is_reported_then_the_original_error(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path,
        """\
        import sys


        def hook(kind, value, tb):
            raise RuntimeError("hook broke")


        sys.excepthook = hook
        raise ValueError("original")
    """,
    )
    assert err.index("Error in sys.excepthook:") < err.index("RuntimeError: hook broke")
    assert (
        err.index("RuntimeError: hook broke")
        < err.index("Original exception was:")
        < err.index("ValueError: original")
    )


def test_the_default_excepthook_still_gives_rt_report(tmp_path: Path) -> None:
    _, err = _rt_run_error(
        tmp_path, "import sys\nsys.excepthook = sys.__excepthook__\nraise ValueError('x')\n"
    )
    assert "ValueError: x" in err.splitlines() and "    at " in err


def test_an_exception_whose_str_fails_is_still_reported(tmp_path: Path) -> None:
    script, err = _rt_run_error(
        tmp_path,
        """\
        class Odd(Exception):
            def __str__(self):
                raise RuntimeError("no str")

        raise Odd()
        """,
    )
    assert "Odd: <exception str() failed>" in err.splitlines()
    assert f"    at {script}:5:1" in err.splitlines()


def test_ctrl_c_shows_where_the_program_was_and_exits_130(tmp_path: Path) -> None:
    script = _script(tmp_path, "def loop():\n    raise KeyboardInterrupt\n\nloop()\n")
    result = _rt("script.py", cwd=tmp_path)
    assert result.returncode == 130
    assert "KeyboardInterrupt" in result.stderr.splitlines()
    assert f"    at loop ({script}:2:5)" in result.stderr.splitlines()
