"""Configuration: rt.toml or [tool.rt], then RT_* variables, then flags; unknown keys and bad types are errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from rt.config import KERNEL_OPTIONS, Config, read_toml
from rt.errors import ConfigError
from rt.hookspecs import hookimpl
from rt.interfaces import ConfigOption
from rt.kernel import Kernel

OPTIONS = (
    *KERNEL_OPTIONS,
    ConfigOption("demo", "retry", int, 0),
    ConfigOption("demo", "ratio", float, 1.0),
    ConfigOption("demo", "verbose", bool, False),
    ConfigOption("demo", "tags", list, ()),
    ConfigOption("demo", "name", str, "x", env="DEMO_NAME"),
)


def load(directory: Path, environ: dict[str, str] | None = None) -> Config:
    config = Config.load(directory, environ or {})
    config.declare(OPTIONS)
    config.check_unknown_keys()
    return config


def test_defaults_without_any_file(tmp_path):
    config = load(tmp_path)
    assert config["backend"] == "asyncio"
    assert config["demo.retry"] == 0
    assert config.source("demo.retry") == "default"


def test_rt_toml_in_a_parent_directory_is_found(tmp_path):
    (tmp_path / "rt.toml").write_text('backend = "trio"\n[demo]\nretry = 3\n')
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    config = load(nested)
    assert config["backend"] == "trio"
    assert config["demo.retry"] == 3
    assert config.source("demo.retry") == str(tmp_path / "rt.toml")


def test_pyproject_tool_rt_is_the_fallback(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname="x"\n[tool.rt]\nbackend = "trio"\n[tool.rt.demo]\nretry = 2\n'
    )
    config = load(tmp_path)
    assert (config["backend"], config["demo.retry"]) == ("trio", 2)
    assert "[tool.rt]" in config.source("demo.retry")


def test_pyproject_without_tool_rt_is_ignored(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\n')
    assert load(tmp_path)["demo.retry"] == 0


def test_rt_toml_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.rt.demo]\nretry = 2\n")
    (tmp_path / "rt.toml").write_text("[demo]\nretry = 5\n")
    assert load(tmp_path)["demo.retry"] == 5


def test_environment_wins_over_file_and_flags_win_over_environment(tmp_path):
    (tmp_path / "rt.toml").write_text("[demo]\nretry = 5\nverbose = false\n")
    config = load(
        tmp_path,
        {"RT_DEMO_RETRY": "7", "RT_DEMO_VERBOSE": "yes", "RT_DEMO_TAGS": "a, b,,c", "DEMO_NAME": "n"},
    )
    assert config["demo.retry"] == 7
    assert config.source("demo.retry") == "RT_DEMO_RETRY"
    assert config["demo.verbose"] is True
    assert config["demo.tags"] == ("a", "b", "c")
    assert config["demo.name"] == "n"
    flagged = config.with_overrides({"demo.retry": 9, "demo.ratio": "0.5"})
    assert flagged["demo.retry"] == 9
    assert flagged["demo.ratio"] == 0.5
    assert flagged.source("demo.retry") == "command line"
    assert config["demo.retry"] == 7, "with_overrides returns a copy"


def test_unknown_key_names_file_and_key_and_suggests(tmp_path):
    (tmp_path / "rt.toml").write_text("[demo]\nretyr = 3\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "rt.toml") in message
    assert "'retyr'" in message and "[demo]" in message and "did you mean 'retry'" in message


def test_unknown_section_is_an_error(tmp_path):
    (tmp_path / "rt.toml").write_text("[dmeo]\nretry = 3\n")
    with pytest.raises(ConfigError, match=r"unknown section \[dmeo\].*'demo'"):
        load(tmp_path)


def test_section_of_a_missing_first_party_plugin_is_a_warning(tmp_path):
    (tmp_path / "rt.toml").write_text("[test]\nretry = 3\n")
    config = load(tmp_path)
    assert any("rt-testrunner" in w and "not installed" in w for w in config.warnings)


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ('[demo]\nretry = "3"\n', "expected int, got str '3'"),
        ("[demo]\nretry = true\n", "expected int, got bool"),
        ('[demo]\nverbose = "yes"\n', "expected bool"),
        ("[demo]\ntags = [1, 2]\n", "expected a list of strings"),
        ('backend = "curio"\n', "'curio' is not one of 'asyncio', 'trio'"),
    ],
)
def test_wrong_type_names_file_and_key(tmp_path, toml, fragment):
    (tmp_path / "rt.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert str(tmp_path / "rt.toml") in str(info.value)
    assert fragment in str(info.value)


def test_int_is_accepted_for_float(tmp_path):
    (tmp_path / "rt.toml").write_text("[demo]\nratio = 2\n")
    assert load(tmp_path)["demo.ratio"] == 2.0


@pytest.mark.parametrize(
    ("name", "value"), [("RT_DEMO_RETRY", "three"), ("RT_DEMO_VERBOSE", "maybe"), ("RT_BACKEND", "x")]
)
def test_bad_environment_value_names_the_variable(tmp_path, name, value):
    with pytest.raises(ConfigError, match=f"environment variable {name}"):
        load(tmp_path, {name: value})


def test_invalid_toml_is_reported_with_the_file(tmp_path):
    (tmp_path / "rt.toml").write_text("[demo\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        Config.load(tmp_path, {})


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path):
    (tmp_path / "rt.toml").write_bytes(b"[demo]\nname = '\xff'\n")
    with pytest.raises(ConfigError, match="rt.toml: invalid TOML: not UTF-8"):
        Config.load(tmp_path, {})


def test_read_toml_parses_a_file_once_while_it_is_unchanged(tmp_path):
    # rt test reads pyproject.toml for [tool.rt] and for pytest's section: the second read is the first's
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.demo]\nx = 1\n")
    first = read_toml(path)
    assert first == {"tool": {"demo": {"x": 1}}}
    assert read_toml(str(path)) is first
    path.write_text("[tool.demo]\nx = 22\n")  # another size: parsed again
    assert read_toml(path) == {"tool": {"demo": {"x": 22}}}
    path.write_text("[tool.demo\n")
    with pytest.raises(tomllib.TOMLDecodeError):
        read_toml(path)
    with pytest.raises(tomllib.TOMLDecodeError):  # a failure is not kept as a result either
        read_toml(path)


def test_plugin_declared_options_are_validated_by_the_kernel(tmp_path):
    class Declares:
        @hookimpl
        def rt_register_config_options(self, register):
            register(ConfigOption("demo", "retry", int, 1))

    (tmp_path / "rt.toml").write_text("[demo]\nretry = 4\n")
    kernel = Kernel(Config.load(tmp_path, {}), load_entry_points=False, plugins=[("declares", Declares())])
    assert kernel.config["demo.retry"] == 4
    (tmp_path / "rt.toml").write_text("[demo]\nretry = 4\nother = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'other'"):
        Kernel(Config.load(tmp_path, {}), load_entry_points=False, plugins=[("declares", Declares())])


def test_rt_disable_plugins_is_a_list(tmp_path):
    config = load(tmp_path, {"RT_DISABLE_PLUGINS": "csrf,secrets"})
    assert config["plugins.disable"] == ("csrf", "secrets")
    assert config.raw("plugins.disable") == ("csrf", "secrets")


def test_secret_values_never_appear_in_errors_or_dumps(tmp_path):
    secret = ConfigOption("demo", "passphrase", int, None, secret=True)
    with pytest.raises(ConfigError) as info:
        Config(environ={"RT_DEMO_PASSPHRASE": "hunter2-not-an-int"}, options=(*OPTIONS, secret))
    assert "hunter2" not in str(info.value) and "<redacted>" in str(info.value)
    (tmp_path / "rt.toml").write_text('[demo]\npassphrase = "hunter2"\n')
    from_file = Config.load(tmp_path, {})
    with pytest.raises(ConfigError) as info:
        from_file.declare((*OPTIONS, secret))
    assert "hunter2" not in str(info.value)
    text_secret = ConfigOption("demo", "token", str, None, secret=True)
    config = Config(environ={"RT_DEMO_TOKEN": "hunter2"}, options=(*OPTIONS, text_secret))
    assert config["demo.token"] == "hunter2"
    assert config.as_dict()["demo.token"] == "<redacted>"
    assert "hunter2" not in repr(config)
