"""A project's pytest configuration, read as pytest reads it, for the options that shape a run.

pytest looks for its configuration from the invocation directory upward and takes the first of, per
directory: pytest 9's ``pytest.toml`` / ``.pytest.toml`` (table ``[pytest]``), ``pytest.ini`` /
``.pytest.ini`` (section ``[pytest]``), ``pyproject.toml``
(``[tool.pytest.ini_options]``, or pytest 9's native ``[tool.pytest]``), ``tox.ini`` (``[pytest]``),
``setup.cfg`` (``[tool:pytest]``). That file's directory is the rootdir; with none, the folder of the first
``pyproject.toml`` upward (one without pytest's tables), else of the first ``setup.py``, else the invocation
directory. Options read here: testpaths,
python_files, python_classes, python_functions, norecursedirs, markers, filterwarnings, xfail_strict,
usefixtures; anything else in the file is left to pytest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_DOCTEST_GLOBS = ("test*.txt",)
DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")


class ConfigError(Exception):
    """A pytest configuration file that cannot be read: shown as one line, a usage error (exit code 1)."""


@attrs.frozen
class PytestConfig:
    rootdir: Path
    inifile: Path | None = None
    values: dict[str, Any] = attrs.field(factory=dict)
    #: ``--doctest-modules`` (addopts or command line): every module's doctests are tests too
    doctest_modules: bool = False
    #: ``--doctest-glob`` patterns (addopts, then command line); none given: pytest's ``test*.txt``
    doctest_globs: tuple[str, ...] = ()
    #: ``--doctest-continue-on-failure``: a doctest runs all its examples, reporting every failure
    doctest_continue_on_failure: bool = False
    #: ``--doctest-report``: how a doctest's expected and actual output are compared in its failure
    doctest_report: str = "udiff"
    #: ``--doctest-ignore-import-errors``: a module that fails to import for its doctests is skipped
    doctest_ignore_import_errors: bool = False
    #: ``--continue-on-collection-errors``: a test module that fails to import does not stop the run
    continue_on_collection_errors: bool = False
    #: ``--ignore`` paths and ``--ignore-glob`` patterns (relative to the folder rt runs in, as pytest takes
    #: them): files and folders left out of the collection; ``--deselect`` node id prefixes: tests left out
    ignore: tuple[str, ...] = ()
    ignore_globs: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()
    #: ``-p`` values of the command line (``no:logging`` blocks pytest's logging plugin, a module name loads
    #: it as a plugin); those of ``addopts`` and ``PYTEST_ADDOPTS`` are read from there
    plugin_options: tuple[str, ...] = ()
    #: the words of ``rt test``'s command line that neither rt nor pytest's own options know, in order (an
    #: option a plugin or conftest.py registers, with its value): they give those options their values after
    #: ``addopts``' words, and what no plugin registers is a usage error once the run's files are collected
    command_line_options: tuple[str, ...] = ()
    #: the folders of pytest's "initial" conftest.py files, which it loads before collecting (those of the
    #: paths the run starts from and their parents, and their ``test*`` subfolders): what their
    #: ``pytest_configure`` warns is shown, not counted, as the installed plugins'; None: the invocation
    #: folder's
    initial_conftest_dirs: frozenset[Path] | None = None
    #: the paths the run starts from (those given, else ``testpaths`` from the rootdir, else the invocation
    #: folder) when ``-c`` or ``--rootdir`` chose the rootdir: a test file outside it (``-c ci/pytest.ini``)
    #: has a node id relative to the one it is under, as pytest's ``_initialpaths``
    initial_paths: tuple[Path, ...] = ()
    #: the names the configuration file sets (before ``-o``/``addopts``): pytest warns of those no plugin
    #: registers ("Unknown config option"), or refuses them under ``strict_config``
    ini_keys: frozenset[str] = frozenset()
    #: ``--runxfail``: xfail marks and ``pytest.xfail()`` do nothing
    runxfail: bool = False
    #: ``--disable-warnings``: the warnings are counted, but the "warnings summary" section is not shown
    disable_warnings: bool = False
    #: pytest's ``--capture`` method (addopts, then the command line): "fd", "sys" or "tee-sys" ("no": -s)
    capture_method: str = "fd"
    #: ``--basetemp`` (addopts, then the command line): the folder of the tests' temporary folders
    basetemp: str | None = None
    #: pytest's ``-v`` count (``config.option.verbose``, ``config.get_verbosity()``): see addopts.AddOpts
    verbose: int = 0

    def lines(self, name: str) -> list[str]:
        """A "linelist" option (markers, filterwarnings): one entry per line, or a TOML list."""
        value = self.values.get(name)
        if value is None:
            return []
        if isinstance(value, str):
            return [line.strip() for line in value.splitlines() if line.strip()]
        return [str(item) for item in value]

    def args(self, name: str, default: tuple[str, ...] = ()) -> list[str]:
        """An "args" option (testpaths, python_files ...): whitespace-separated, or a TOML list."""
        value = self.values.get(name)
        if value is None:
            return list(default)
        if isinstance(value, str):
            return value.split()
        return [str(item) for item in value]

    def flag(self, name: str) -> bool:
        value = self.values.get(name, False)
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)

    @property
    def log_level(self) -> int | None:
        """``log_level`` (or ``--log-level`` in ``addopts``): the level the root logger is lowered to while
        each test runs, so ``caplog`` and the captured log see records down to it, as in pytest; a level
        name (any case) or a number. ConfigError for anything else, as pytest refuses it."""
        return self._level("log_level")

    @property
    def log_cli(self) -> bool:
        """pytest's live logging: ``log_cli = true``, or a ``log_cli_level`` (``--log-cli-level``) given."""
        return self.flag("log_cli") or self.values.get("log_cli_level") not in (None, "")

    @property
    def log_cli_level(self) -> int | None:
        """The level of live logging's records: ``log_cli_level``, else ``log_level``, else none of its own."""
        level = self._level("log_cli_level")
        return level if level is not None else self.log_level

    def _level(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        text = str(value).strip()
        if text.isdigit():
            return int(text)
        import logging

        level = logging.getLevelName(text.upper())
        if not isinstance(level, int):
            raise ConfigError(
                f"{name} = {text!r} in {self.inifile or 'the pytest configuration'} is not a logging level"
                " (DEBUG, INFO, WARNING, ERROR, CRITICAL or a number)"
            )
        return level

    @property
    def doctest_patterns(self) -> tuple[str, ...]:
        """The text files whose examples are doctests (``--doctest-glob``, pytest's default ``test*.txt``)."""
        return self.doctest_globs or DEFAULT_DOCTEST_GLOBS

    @property
    def python_files(self) -> list[str]:
        return self.args("python_files", DEFAULT_PYTHON_FILES)

    @property
    def python_classes(self) -> list[str]:
        return self.args("python_classes", ("Test",))

    @property
    def python_functions(self) -> list[str]:
        return self.args("python_functions", ("test",))

    @property
    def norecursedirs(self) -> list[str]:
        return self.args("norecursedirs", DEFAULT_NORECURSE)


def _ini_section(path: Path, section: str) -> dict[str, Any] | None:
    import configparser  # only for a project configured in pytest.ini, setup.cfg or tox.ini

    parser = configparser.ConfigParser(interpolation=None)
    # names keep their case, as pytest's iniconfig keeps it (configparser lowercases them): pytest-django's
    # DJANGO_SETTINGS_MODULE is read under that name
    parser.optionxform = str  # type: ignore[assignment, method-assign]
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {str(exc).splitlines()[0]}") from None
    if not parser.has_section(section):
        return None
    return dict(parser.items(section))


#: pytest's refusal of a setup.cfg with a ``[pytest]`` section and no ``[tool:pytest]`` (its words)
SETUP_CFG_PYTEST_SECTION = (
    "[pytest] section in setup.cfg files is no longer supported, change to [tool:pytest] instead."
)


def _refuse_pytest_section(setup_cfg: Path) -> None:
    """pytest's refusal of a setup.cfg with a ``[pytest]`` section and no ``[tool:pytest]``: it reads that
    section no more, and fails rather than run without the configuration written there (pytest 9.2 exits
    with status 1). The section headers alone are read, so that a file configparser cannot parse is refused
    only where it is the configuration, as before."""
    try:
        headers = {
            line.strip() for line in setup_cfg.read_text(encoding="utf-8").splitlines() if line[:1] == "["
        }
    except (OSError, UnicodeDecodeError):
        return
    if "[pytest]" in headers and "[tool:pytest]" not in headers:
        raise ConfigError(SETUP_CFG_PYTEST_SECTION)


def _toml_section(path: Path) -> dict[str, Any] | None:
    import tomllib  # only when a pyproject.toml is there (`rt test` start-up is a measured target)

    from rt.config import read_toml  # the kernel parsed it already when it looked for [tool.rt]

    try:
        data = read_toml(path)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    tool = data.get("tool", {}).get("pytest")
    if not isinstance(tool, dict):
        return None
    legacy = tool.get("ini_options")
    if isinstance(legacy, dict):
        return dict(legacy)  # a copy: the parsed file is shared with the kernel's configuration
    return {key: value for key, value in tool.items() if key != "ini_options"}


def _pytest_table(path: Path) -> dict[str, Any] | None:
    """The ``[pytest]`` table of a TOML file (pytest 9's ``pytest.toml``), native TOML values."""
    import tomllib

    from rt.config import read_toml

    try:
        data = read_toml(path)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    table = data.get("pytest")
    if isinstance(table, dict):
        return dict(table)
    loose = [key for key, value in data.items() if not isinstance(value, dict)]
    if loose:
        raise ConfigError(
            f"{path}: pytest configuration must be under a [pytest] table (found top-level options: "
            f"{', '.join(loose)})"
        )
    return None


def _read(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    """The configuration file of ``directory`` and its values, in pytest's order of names. pytest reads the
    folder's setup.cfg even when another file there holds the configuration (to list the files it ignores),
    so that setup.cfg's ``[pytest]`` section is refused in either case."""
    if (directory / "setup.cfg").is_file():
        _refuse_pytest_section(directory / "setup.cfg")
    for name in ("pytest.toml", ".pytest.toml"):
        candidate = directory / name
        if candidate.is_file():
            return candidate, _pytest_table(candidate) or {}  # always the configuration, even empty
    for name in ("pytest.ini", ".pytest.ini"):
        candidate = directory / name
        if candidate.is_file():
            return candidate, _ini_section(candidate, "pytest") or {}
    candidate = directory / "pyproject.toml"
    if candidate.is_file():
        section = _toml_section(candidate)
        if section is not None:
            return candidate, section
    for name, section_name in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        candidate = directory / name
        if candidate.is_file():
            ini = _ini_section(candidate, section_name)
            if ini is not None:
                return candidate, ini
    return None


def load(start: Path) -> PytestConfig:
    """The configuration that pytest run in ``start`` would use; none found: the defaults, rootdir as pytest
    chooses it then (the first folder upward with a ``pyproject.toml``, else with a ``setup.py``, else
    ``start``), so that a run started in a project's ``tests`` folder still loads the conftest.py files up to
    the project's root and names its tests from there."""
    pyproject: Path | None = None
    for directory in (start, *start.parents):
        found = _read(directory)
        if found is not None:
            return PytestConfig(directory, found[0], found[1])
        if pyproject is None and (directory / "pyproject.toml").is_file():
            pyproject = directory
    if pyproject is not None:
        return PytestConfig(pyproject)
    for directory in (start, *start.parents):
        if (directory / "setup.py").is_file():
            return PytestConfig(directory)
    return PytestConfig(start)


def load_file(path: Path) -> PytestConfig:
    """pytest's ``-c FILE``: the configuration in that file (a ``.toml`` file's ``[tool.pytest]``, a setup.cfg's
    ``[tool:pytest]``, any other file's ``[pytest]``, none: empty), its folder the rootdir."""
    if not path.is_file():
        raise ConfigError(f"-c/--config-file: no such file: {path}")
    path = path.resolve()
    if path.name in ("pytest.toml", ".pytest.toml"):
        section = _pytest_table(path)
    elif path.suffix == ".toml":
        section = _toml_section(path)
        if section is None and path.name != "pyproject.toml":
            section = _pytest_table(path)  # pytest 9.2 reads any other TOML file's [pytest] too
    else:
        if path.name == "setup.cfg":
            _refuse_pytest_section(path)
        section = _ini_section(path, "tool:pytest" if path.name == "setup.cfg" else "pytest")
    return PytestConfig(path.parent, path, section or {})
