"""One merged view of configuration: rt.toml or ``[tool.rt]``, then ``RT_*`` variables, then flags.

Lookup order (later wins): the file, the environment, command-line overrides. The file is the first
``rt.toml`` found in the working directory or a parent; if there is none, the first ``pyproject.toml`` with
a ``[tool.rt]`` table. Keys are declared by plugins (``rt_register_config_options``), and the kernel declares
its own; a key nobody declared, or a value of the wrong type, is a :class:`ConfigError` naming the file (or
variable) and key, because a typo in ``retyr = 3`` silently ignored is worse than an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from rt._known import SECTION_TO_DISTRIBUTION
from rt.errors import ConfigError


@attrs.frozen
class ConfigOption:
    """One key a plugin reads from ``[section]`` of rt.toml / ``[tool.rt.section]`` of pyproject.toml.

    ``type`` is one of ``str``, ``int``, ``float``, ``bool`` or ``list`` (of strings). The environment variable
    defaults to ``RT_<SECTION>_<KEY>`` (``RT_<KEY>`` for the top-level section ``""``), upper-cased with dashes
    as underscores; set ``env`` to choose another name, or ``env=""`` for none. ``secret=True`` keeps the
    value out of every message and of :meth:`rt.config.Config.as_dict`.

    It lives here, next to the configuration that reads it, so that this module imports no other rt module
    that could import it back; :mod:`rt.interfaces` re-exports it for plugins.
    """

    section: str
    key: str
    type: type
    default: Any = None
    help: str = ""
    env: str | None = None
    choices: tuple[Any, ...] | None = None
    secret: bool = False  # a passphrase or token: never shown in errors, reprs or dumps of the configuration

    @property
    def env_name(self) -> str | None:
        if self.env is not None:
            return self.env or None
        parts = ["RT", self.section, self.key] if self.section else ["RT", self.key]
        return "_".join(p for p in parts if p).upper().replace("-", "_").replace(".", "_")

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.key}" if self.section else self.key


KERNEL_OPTIONS: tuple[ConfigOption, ...] = (
    ConfigOption(
        "",
        "backend",
        str,
        "asyncio",
        choices=("asyncio", "trio"),
        help="async backend for everything rt runs (rt.serve(...).run(), rt test, rt run)",
    ),
    ConfigOption(
        "",
        "loop",
        str,
        "auto",
        choices=("auto", "asyncio", "uvloop"),
        help="the asyncio event loop: uvloop when installed (auto), or always asyncio's own",
    ),
    ConfigOption(
        "plugins",
        "disable",
        list,
        (),
        env="RT_DISABLE_PLUGINS",
        help="entry-point names of plugins not to load",
    ),
)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@attrs.frozen
class ConfigFile:
    """The file configuration came from, and its rt table flattened to ``{section: {key: value}}``.

    Top-level keys are in section ``""``.
    """

    path: Path | None
    label: str  # how to name it in messages: "rt.toml" or "pyproject.toml [tool.rt]"
    sections: Mapping[str, Mapping[str, Any]]

    @classmethod
    def empty(cls) -> ConfigFile:
        return cls(None, "defaults", {})


def find_config_file(cwd: Path) -> ConfigFile:
    """Find rt.toml in ``cwd`` or above; failing that, a pyproject.toml with ``[tool.rt]``."""
    directories = [cwd, *cwd.parents]
    for directory in directories:
        candidate = directory / "rt.toml"
        if candidate.is_file():
            return ConfigFile(
                candidate, str(candidate), _split_sections(_read_toml(candidate), str(candidate))
            )
    for directory in directories:
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            table = _read_toml(candidate).get("tool", {}).get("rt")
            if table is not None:
                label = f"{candidate} [tool.rt]"
                if not isinstance(table, dict):
                    raise ConfigError(f"{label}: must be a table")
                return ConfigFile(candidate, label, _split_sections(table, label))
    return ConfigFile.empty()


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when a file exists: most library uses of rt never read one

    try:
        return read_toml(path)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


#: parsed TOML files by absolute path, each with the (mtime, size, inode) it was read at: :func:`read_toml`
_PARSED: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The TOML file at ``path``, parsed (``tomllib``), read once per process while it is unchanged.

    A project's pyproject.toml is read twice by ``rt test``: here, for ``[tool.rt]``, and by the test
    runner for pytest's ``[tool.pytest.ini_options]``; parsing it is about 2 million instructions per KB, so
    the second reader gets the first one's result. A file whose modification time, size or inode changed is
    parsed again. The result is shared: callers must not change it (copy what they keep). Raises what
    ``open`` and ``tomllib.loads`` raise (``OSError``, ``UnicodeDecodeError``, ``tomllib.TOMLDecodeError``);
    nothing is kept for a file that failed."""
    import tomllib

    key = os.path.abspath(path)
    with open(key, "rb") as file:
        info = os.fstat(file.fileno())
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        kept = _PARSED.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        data = tomllib.loads(file.read().decode("utf-8"))
    _PARSED[key] = (stamp, data)
    return data


def _split_sections(table: Mapping[str, Any], label: str) -> dict[str, dict[str, Any]]:
    sections: dict[str, dict[str, Any]] = {"": {}}
    for key, value in table.items():
        if isinstance(value, dict):
            sections[key] = dict(value)
        else:
            sections[""][key] = value
    return sections


REDACTED = "<redacted>"


def _show(option: ConfigOption, value: Any) -> str:
    """How a value appears in an error message: its repr, unless the option holds a secret."""
    return REDACTED if option.secret else repr(value)


def _coerce_file_value(option: ConfigOption, value: Any, where: str) -> Any:
    expected = option.type
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if expected is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: expected a list of strings, got {_show(option, value)}")
        value = tuple(value)
    elif (expected is int and isinstance(value, bool)) or not isinstance(value, expected):
        raise ConfigError(
            f"{where}: expected {expected.__name__}, got {type(value).__name__} {_show(option, value)}"
        )
    _check_choice(option, value, where)
    return value


def _coerce_text_value(option: ConfigOption, text: str, where: str) -> Any:
    """Parse a value given as text (an environment variable or a flag)."""
    expected = option.type
    try:
        if expected is bool:
            lowered = text.strip().lower()
            if lowered in _TRUE:
                value: Any = True
            elif lowered in _FALSE:
                value = False
            else:
                raise ValueError
        elif expected is int:
            value = int(text)
        elif expected is float:
            value = float(text)
        elif expected is list:
            value = tuple(part.strip() for part in text.split(",") if part.strip())
        else:
            value = text
    except ValueError:
        raise ConfigError(f"{where}: expected {expected.__name__}, got {_show(option, text)}") from None
    _check_choice(option, value, where)
    return value


def _check_choice(option: ConfigOption, value: Any, where: str) -> None:
    if option.choices is not None and value not in option.choices:
        allowed = ", ".join(repr(c) for c in option.choices)
        raise ConfigError(f"{where}: {_show(option, value)} is not one of {allowed}")


def _did_you_mean(word: str, candidates: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Config:
    """Configuration values by dotted key (``"backend"``, ``"test.retry"``), with their source.

    Values change only when the kernel declares more options (:meth:`declare`, as plugins are registered);
    :meth:`with_overrides` returns a new ``Config``. Values of keys that no plugin declared are still
    readable raw through :meth:`raw` (the kernel needs ``plugins.disable`` before any plugin is loaded).
    """

    def __init__(
        self,
        file: ConfigFile | None = None,
        environ: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
        options: Iterable[ConfigOption] = KERNEL_OPTIONS,
    ) -> None:
        self.file = file or ConfigFile.empty()
        self.environ: Mapping[str, str] = dict(os.environ if environ is None else environ)
        self.overrides: dict[str, Any] = dict(overrides or {})
        self.options: dict[str, ConfigOption] = {}
        self.warnings: list[str] = []
        self._values: dict[str, Any] = {}
        self._sources: dict[str, str] = {}
        self.declare(options)

    @classmethod
    def load(
        cls, cwd: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
    ) -> Config:
        """Read the configuration file for ``cwd`` (default: the working directory) and the environment."""
        return cls(find_config_file(Path(cwd or os.getcwd()).resolve()), environ)

    # -- declaring and validating ---------------------------------------------------------------------------

    def declare(self, options: Iterable[ConfigOption]) -> None:
        """Accept the given options and (re)compute every value; raises ConfigError on a bad value."""
        for option in options:
            self.options[option.dotted] = option
        self._resolve()

    def _resolve(self) -> None:
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for dotted, option in self.options.items():
            value, source = option.default, "default"
            section = self.file.sections.get(option.section, {})
            if option.key in section:
                where = f"{self.file.label}: key {option.key!r}" + (
                    f" in [{option.section}]" if option.section else ""
                )
                value, source = _coerce_file_value(option, section[option.key], where), str(self.file.label)
            env_name = option.env_name
            if env_name and env_name in self.environ:
                where = f"environment variable {env_name}"
                value, source = _coerce_text_value(option, self.environ[env_name], where), env_name
            if dotted in self.overrides:
                override = self.overrides[dotted]
                where = f"option for {dotted!r}"
                if isinstance(override, str) and option.type is not str:
                    override = _coerce_text_value(option, override, where)
                elif option.type is list and isinstance(override, list | tuple):
                    override = tuple(override)
                else:
                    _check_choice(option, override, where)
                value, source = override, "command line"
            values[dotted], sources[dotted] = value, source
        self._values, self._sources = values, sources

    def check_unknown_keys(self, disabled_sections: Iterable[str] = ()) -> None:
        """Raise ConfigError for a file key nobody declared; warn for sections of absent first-party plugins."""
        known_sections = {o.section for o in self.options.values()}
        disabled = set(disabled_sections)
        self.warnings = []
        for section, table in self.file.sections.items():
            if section not in known_sections:
                if section in SECTION_TO_DISTRIBUTION:
                    dist = SECTION_TO_DISTRIBUTION[section]
                    state = "disabled" if section in disabled else "not installed"
                    self.warnings.append(
                        f"{self.file.label}: [{section}] is read by {dist}, which is {state}; its keys are ignored"
                    )
                    continue
                hint = _did_you_mean(section, [s for s in known_sections if s])
                raise ConfigError(f"{self.file.label}: unknown section [{section}]{hint}")
            declared = {o.key for o in self.options.values() if o.section == section}
            for key in table:
                if key not in declared:
                    where = f"[{section}]" if section else "top level"
                    raise ConfigError(
                        f"{self.file.label}: unknown key {key!r} at {where}{_did_you_mean(key, declared)}"
                    )

    # -- reading -------------------------------------------------------------------------------------------

    def get(self, dotted: str, default: Any = None) -> Any:
        """The value of a declared key, or ``default`` when nobody declared it."""
        return self._values.get(dotted, default)

    def __getitem__(self, dotted: str) -> Any:
        try:
            return self._values[dotted]
        except KeyError:
            raise KeyError(f"no plugin declared the configuration key {dotted!r}") from None

    def source(self, dotted: str) -> str:
        """Where the value came from: ``default``, the file label, an environment variable, ``command line``."""
        return self._sources.get(dotted, "default")

    def raw(self, dotted: str) -> Any:
        """The value of a key as given, before any plugin declared it (file, then env, then overrides)."""
        option = self.options.get(dotted)
        if option is not None:
            return self._values[dotted]
        section, _, key = dotted.rpartition(".")
        return self.file.sections.get(section, {}).get(key)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Config:
        """A copy with command-line values applied (they win over file and environment)."""
        clone = Config(self.file, self.environ, {**self.overrides, **overrides}, self.options.values())
        clone.warnings = list(self.warnings)
        return clone

    def as_dict(self) -> dict[str, Any]:
        """Every value by dotted key, secrets replaced by ``"<redacted>"`` (safe to print or log)."""
        return {
            key: REDACTED if self.options[key].secret and value is not None else value
            for key, value in self._values.items()
        }

    def __repr__(self) -> str:
        return f"<Config from {self.file.label}: {len(self._values)} keys>"
