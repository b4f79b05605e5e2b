"""pytest 9's type check of its native TOML configuration (``[tool.pytest]`` of pyproject.toml, ``pytest.toml``).

In that table pytest keeps TOML's own types and converts nothing: an ini option declared a list (``args``,
``linelist``, ``paths``) must be a list of strings, a ``bool`` a boolean, a ``string`` a string, a verbosity
level an integer or ``"auto"``. pytest checks a value when it first reads the option, and the options below are
those it reads in every run before a test's result is reported, so a wrong type there stops pytest with a usage
error (status 4) before any test: psutil 7.2.2's ``verbosity_subtests = "0"``. The legacy
``[tool.pytest.ini_options]`` table is read as ini text (no check), as pytest reads it.
"""

from __future__ import annotations

from typing import Any

from rt_testrunner.pyconfig import PytestConfig

#: pytest's own options it reads in every run, by their declared type (pytest 9.2's ``parser.addini``); a
#: tuple is a ``Literal`` type: a string, one of those, in pytest's order
_READ_EVERY_RUN: dict[str, str | tuple[str, ...]] = {
    "addopts": "args",
    "testpaths": "args",
    "required_plugins": "args",
    "usefixtures": "args",
    "filterwarnings": "linelist",
    "markers": "linelist",
    "pythonpath": "paths",
    "minversion": "string",
    "empty_parameter_set_mark": ("skip", "xfail", "fail_at_collect"),
    "console_output_style": ("classic", "progress", "count", "times", "progress-even-when-capture-no"),
    "log_format": "string",
    "log_date_format": "string",
    "log_file": "string",
    "log_file_mode": ("w", "a"),
    "tmp_path_retention_policy": ("all", "failed", "none"),
    "log_cli": "bool",
    "consider_namespace_packages": "bool",
    "enable_assertion_pass_hook": "bool",
    "faulthandler_exit_on_timeout": "bool",
    "verbosity_test_cases": "verbosity",
    "verbosity_subtests": "verbosity",
}


def _native_table(config: PytestConfig) -> dict[str, Any] | None:
    """The configuration's native TOML table, as the file holds it; None for any other kind of file."""
    path = config.inifile
    if path is None or path.suffix != ".toml":
        return None
    from rt.config import read_toml  # the file was parsed already: read_toml keeps what it read

    data = read_toml(path)
    if path.name in ("pytest.toml", ".pytest.toml"):
        table = data.get("pytest")
        return table if isinstance(table, dict) else None
    table = data.get("tool", {}).get("pytest")
    if not isinstance(table, dict) or isinstance(table.get("ini_options"), dict):
        return None
    return table


def _refusal(kind: str | tuple[str, ...], value: object) -> str | None:
    """What pytest says of ``value`` for an option of type ``kind`` (after ``config option 'NAME' ``)."""
    got = f"got {type(value).__name__}: {value!r}"
    if isinstance(kind, tuple):  # a fixed choice (``console_output_style = "bogus"``)
        if not isinstance(value, str):
            return f"expects a string, {got}"
        return None if value in kind else f"expects one of {' | '.join(map(repr, kind))}, got {value!r}"
    if kind in ("args", "linelist", "paths"):
        if not isinstance(value, list):
            return f"expects a list for type '{kind}', {got}"
        for index, item in enumerate(value):
            if not isinstance(item, str):
                return (
                    f"expects a list of strings, but item at index {index} is {type(item).__name__}: {item!r}"
                )
        return None
    if kind == "bool":
        return None if isinstance(value, bool) else f"expects a bool, {got}"
    if kind == "string":
        return None if isinstance(value, str) else f"expects a string, {got}"
    is_level = (isinstance(value, int) and not isinstance(value, bool)) or value == "auto"
    return None if is_level else f"expects one of int | 'auto', {got}"


def native_type_error(config: PytestConfig) -> str | None:
    """pytest's usage error for the first value of the native table whose type the option refuses (in the
    file's order), else None. A value ``-o`` replaced is not the file's, and is not checked."""
    table = _native_table(config)
    if table is None:
        return None
    for name, value in table.items():
        kind = _READ_EVERY_RUN.get(name)
        if kind is None or config.values.get(name) is not value:
            continue
        refusal = _refusal(kind, value)
        if refusal is not None:
            return f"{config.inifile}: config option '{name}' {refusal}"
    return None


def choice_error(config: PytestConfig) -> str | None:
    """pytest's usage error for an option of fixed choices whose value, a string from an ini file or from
    ``-o``, is none of them: pytest checks those in every kind of configuration file (``console_output_style
    = bogus`` in pytest.ini), not in the native table alone. None when every value is one of its choices."""
    if config.inifile is None:
        return None
    for name, value in config.values.items():
        kind = _READ_EVERY_RUN.get(name)
        if isinstance(kind, tuple) and isinstance(value, str):
            refusal = _refusal(kind, value)
            if refusal is not None:
                return f"{config.inifile}: config option '{name}' {refusal}"
    return None
