"""The `rt` command: --version, --help, plugins, plugin subcommands, suggestions, `rt script.py` routing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import rt
import rt.kernel
from rt import cli
from rt.config import Config
from rt.hookspecs import hookimpl
from rt.interfaces import Command
from rt.kernel import Kernel


class Greeter:
    """A plugin contributing `rt greet` and `rt run`, which record what they received."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    @hookimpl
    def rt_register_commands(self, register):
        def configure(parser):
            parser.add_argument("who")

        def greet(args, kernel):
            self.calls.append(("greet", (args.who, kernel.config["backend"], rt.get_kernel() is kernel)))
            print(f"hello {args.who}")
            return 3

        def configure_run(parser):
            parser.add_argument("script")
            parser.add_argument("args", nargs=__import__("argparse").REMAINDER)  # as rt-debug does

        register(Command("greet", "say hello", configure, greet))
        register(
            Command(
                "open",
                "takes options it learns while it runs",
                lambda parser: parser.add_argument("--known", action="store_true"),
                lambda a, k: self.calls.append(("open", (a.known, a.extra_options))) or 0,
                extra_options=True,
            )
        )
        register(
            Command(
                "run", "run a script", configure_run, lambda a, k: self.calls.append(("run", a.script)) or 0
            )
        )


@pytest.fixture
def greeter(monkeypatch, tmp_path):
    plugin = Greeter()
    monkeypatch.setattr(
        rt.kernel,  # rt.cli.main imports it when it runs
        "Kernel",
        lambda: Kernel(Config.load(tmp_path, {}), load_entry_points=False, plugins=[("greeter", plugin)]),
    )
    return plugin


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rt {rt.__version__}"


def test_version_after_other_options(greeter, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--backend", "trio", "--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"rt {rt.__version__}"


def test_help_lists_plugin_commands(greeter, capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "plugins" in out and "greet" in out and "say hello" in out


def test_plugin_command_runs_with_flags_applied_and_kernel_current(greeter, capsys):
    assert cli.main(["greet", "--backend", "trio", "world"]) == 3
    assert capsys.readouterr().out == "hello world\n"
    assert greeter.calls == [("greet", ("world", "trio", True))]


def test_mistyped_command_suggests_the_closest(greeter, capsys):
    assert cli.main(["gret", "x"]) == 2
    assert "Did you mean `rt greet`?" in capsys.readouterr().err


def test_script_routes_to_run(greeter, tmp_path):
    script = tmp_path / "app.py"
    script.write_text("print(1)\n")
    assert cli.main([str(script)]) == 0
    assert greeter.calls == [("run", str(script))]


def test_package_directory_routes_to_run(greeter, tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__main__.py").write_text("print(1)\n")
    assert cli.main([str(tmp_path / "app")]) == 0
    assert greeter.calls == [("run", str(tmp_path / "app"))]


def test_script_without_run_command_names_rt_debug(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        rt.kernel, "Kernel", lambda: Kernel(Config.load(tmp_path, {}), load_entry_points=False)
    )
    assert cli.main(["app.py"]) == 2
    assert "rt-debug" in capsys.readouterr().err


def test_first_party_command_without_plugin_names_the_distribution(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        rt.kernel, "Kernel", lambda: Kernel(Config.load(tmp_path, {}), load_entry_points=False)
    )
    assert cli.main(["secrets", "get"]) == 2
    assert "pip install rt-secrets" in capsys.readouterr().err


def test_config_error_is_one_line_exit_1(tmp_path, run_python):
    (tmp_path / "rt.toml").write_text("[nonsense]\nx = 1\n")
    result = subprocess.run(
        [sys.executable, "-m", "rt", "plugins"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=__import__("rt.testing").testing.clean_environ(),
    )
    assert result.returncode == 1
    assert result.stderr.startswith("rt: ") and "unknown section [nonsense]" in result.stderr
    assert "Traceback" not in result.stderr


def test_plugins_command_lists_installed_plugins_as_json(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "rt", "plugins", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=__import__("rt.testing").testing.clean_environ(),
    )
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    import importlib.metadata

    expected = sorted(ep.name for ep in importlib.metadata.entry_points(group="rt"))
    assert [p["name"] for p in listed] == expected
    for plugin in listed:
        assert plugin["distribution"] and plugin["version"]


class Fragile:
    """A plugin whose `rt broken` command fails to configure and whose `rt crash` command raises."""

    @hookimpl
    def rt_register_commands(self, register):
        def bad_configure(parser):
            raise ImportError("missing module")

        def crash(args, kernel):
            raise ValueError("bad state")

        register(Command("broken", "cannot configure", bad_configure, lambda a, k: 0))
        register(Command("crash", "raises", lambda p: None, crash))


@pytest.fixture
def fragile(monkeypatch, tmp_path):
    monkeypatch.setattr(
        rt.kernel,  # rt.cli.main imports it when it runs
        "Kernel",
        lambda: Kernel(Config.load(tmp_path, {}), load_entry_points=False, plugins=[("fragile", Fragile())]),
    )


def test_a_broken_command_does_not_break_other_commands(fragile, capsys):
    assert cli.main(["plugins"]) == 0
    assert "fragile" in capsys.readouterr().out


def test_a_command_that_fails_to_configure_names_its_plugin(fragile, capsys):
    assert cli.main(["broken"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "rt broken: plugin 'fragile' failed to set up `rt broken`: ImportError: missing module"
    )


def test_a_crashing_command_names_its_plugin(fragile, capsys):
    assert cli.main(["crash"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.rstrip().endswith(
        "rt crash: crashed inside plugin 'fragile' (no distribution): ValueError: bad state"
    )


def test_a_command_with_extra_options_checks_them_itself(greeter):
    """Command.extra_options: the words argparse does not know go to the command, in order (rt test's
    options that pytest plugins register), instead of being the rt command line's usage error."""
    assert cli.main(["open", "--later", "3", "--known", "--other=x"]) == 0
    assert greeter.calls == [("open", (True, ["--later", "3", "--other=x"]))]


def test_errors_share_one_shape(greeter, capsys, monkeypatch):
    """`rt <command>: message` on one line; usage errors exit 2, other errors 1."""
    with pytest.raises(SystemExit) as info:
        cli.main(["greet", "--no-such-flag", "x"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "rt greet: unrecognized arguments: --no-such-flag (see `rt greet --help`)"
    )
    with pytest.raises(SystemExit) as info:
        cli.main(["greet"])  # its required argument is missing
    assert info.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("rt greet: the following arguments are required") and last.endswith(
        "(see `rt greet --help`)"
    )
    assert cli.main(["nosuchcommand"]) == 2
    assert capsys.readouterr().err.startswith("rt: unknown command 'nosuchcommand'.")
    # a configuration error (not a usage error) is `rt: message`, status 1: test_config_error_is_one_line_exit_1


def test_help_mentions_running_a_file(greeter, capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "rt FILE.py [ARGS ...]" in out


def test_a_remainder_argument_is_not_called_required(greeter, capsys):
    """rt run's usage: only the script is required, not the arguments passed on to it."""
    with pytest.raises(SystemExit) as info:
        cli.main(["run"])
    assert info.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert "required: script" in last and "args" not in last, last
