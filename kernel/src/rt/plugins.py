"""The plugin manager: entry points of group ``rt``, blocking by name, and a typed facade over the hooks.

A :class:`PluginHost` belongs to one :class:`rt.kernel.Kernel`; there is no module-level manager, so a
test builds a fresh kernel instead of resetting a global. The rest of rt calls the facade's methods
(``host.hmac_algorithms()``), and the facade dispatches every hook through pluggy (``pm.hook.x(...)``), so
pluggy's tracing, call monitoring and ``wrapper=True`` implementations see every call. Duplicate and failure
messages still name the plugin at fault: the frame (or traceback entry) of the implementation that called
``register`` or raised identifies it (:meth:`PluginHost._plugin_of`).
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable, Iterable
from types import CodeType, FrameType, TracebackType
from typing import Any, TypeVar

import attrs
import pluggy

from rt import hookspecs
from rt._entrypoints import entry_points
from rt.config import ConfigOption
from rt.errors import DuplicateRegistrationError, PluginLoadError
from rt.interfaces import Command, NamespaceEntry, Registered

ENTRY_POINT_GROUP = "rt"
T = TypeVar("T")


@attrs.frozen
class PluginInfo:
    """One loaded (or disabled) plugin, as ``rt plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...] = ()
    disabled: bool = False
    entry_point: str | None = None


__all__ = ["ENTRY_POINT_GROUP", "PluginHost", "PluginInfo", "Registered", "loading_plugin"]

_loading = threading.local()
_OBSERVER_HOOKS = ("rt_http_request", "rt_http_response")


def _logged(function: Callable[..., Any], plugin_name: str, hook_name: str) -> Callable[..., Any]:
    """``function``, with an exception it raises logged (naming its plugin) instead of propagated."""
    import functools

    @functools.wraps(function)
    def observer(*args: Any) -> None:
        try:
            function(*args)
        except Exception:  # noqa: BLE001 - observers must not break what they observe
            import logging

            logging.getLogger("rt").exception("plugin %r failed in %s; ignored", plugin_name, hook_name)

    return observer


def loading_plugin() -> str | None:
    """The entry point this thread is importing right now (``"debug (rt_debug.plugin)"``), else None.

    The kernel uses it to turn a re-entrant kernel construction (a module imported by a plugin's entry point
    uses ``rt.`` at import time, typically a script named like the plugin's package) into a clear error
    instead of a deadlock.
    """
    value: str | None = getattr(_loading, "entry_point", None)
    return value


def shadowing_file(entry_point_value: str) -> str | None:
    """The file that shadows an entry point's top-level package, if a plain module stands where the plugin
    expects a package (``rt_debug.py`` in the script's directory or the working directory)."""
    import importlib.util

    module = entry_point_value.partition(":")[0]
    top = module.partition(".")[0]
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main_file and inspect.getmodulename(main_file) == top:
        return str(main_file)
    try:
        spec = importlib.util.find_spec(top) if top not in sys.modules else sys.modules[top].__spec__
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    if origin and "." in module and spec is not None and spec.submodule_search_locations is None:
        return origin
    return None


class PluginHost:
    """Loads plugins into a fresh :class:`pluggy.PluginManager` and exposes what they register."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._internal: set[str] = set()
        self._cache: dict[str, Any] = {}
        self.generation = 0
        """Incremented whenever a plugin is registered or unregistered: a cache of registered things that
        stores the generation it was built at is stale when this differs. (Equivalently, each facade
        method returns the *same* dict object until the registry changes.)"""

    # -- loading -------------------------------------------------------------------------------------------

    def load_entry_points(self, disabled: Iterable[str] = ()) -> None:
        """Import and register every entry point of group ``rt`` whose name is not in ``disabled``."""
        blocked = set(disabled)
        for ep in entry_points(ENTRY_POINT_GROUP):
            dist_name, version = ep.distribution, ep.version
            if ep.name in self._infos:
                # _entrypoints already keeps one copy of a distribution found twice on sys.path, so this is
                # two *different* distributions claiming one plugin name: silently dropping one would hide it.
                other = self._infos[ep.name].distribution
                raise DuplicateRegistrationError(
                    f"the plugin name {ep.name!r} is declared by two distributions, {other or '?'} and "
                    f"{dist_name or '?'}; uninstall one of them"
                )
            if ep.name in blocked:
                self.pm.set_blocked(ep.name)
                self._infos[ep.name] = PluginInfo(
                    ep.name, dist_name, version, disabled=True, entry_point=ep.value
                )
                continue
            shadow = shadowing_file(ep.value)
            if shadow is not None:
                raise PluginLoadError(
                    f"plugin {ep.name!r} (distribution {dist_name or '?'}) cannot be imported: {shadow} has the "
                    f"name of its package {ep.value.partition('.')[0]!r} and hides it; rename that file"
                )
            _loading.entry_point = f"{ep.name} ({ep.value})"
            try:
                plugin = ep.load()
            except PluginLoadError:
                raise
            except Exception as exc:
                raise PluginLoadError(
                    f"plugin {ep.name!r} (distribution {dist_name or '?'}, entry point {ep.value}) failed to "
                    f"import: {type(exc).__name__}: {exc}. Reinstall it, or disable it with "
                    f"RT_DISABLE_PLUGINS={ep.name}"
                ) from exc
            finally:
                _loading.entry_point = None
            self.register(plugin, ep.name, distribution=dist_name, version=version, entry_point=ep.value)
        self.check_pending()

    def register(
        self,
        plugin: object,
        name: str | None = None,
        *,
        distribution: str | None = None,
        version: str | None = None,
        entry_point: str | None = None,
        internal: bool = False,
    ) -> str:
        """Register a plugin object (a module or an instance with ``@hookimpl`` methods); returns its name."""
        try:
            registered = self.pm.register(plugin, name)
        except pluggy.PluginValidationError as exc:
            raise PluginLoadError(
                f"plugin {name or plugin!r} does not match rt's hook specifications: {exc}"
            ) from exc
        except ValueError as exc:
            raise PluginLoadError(f"cannot register plugin {name or plugin!r}: {exc}") from exc
        if registered is None:  # blocked
            return name or ""
        plugin_name = self.pm.get_name(plugin) or str(name)
        self._isolate_observers(plugin, plugin_name)
        if internal:
            self._internal.add(plugin_name)
        self._infos[plugin_name] = PluginInfo(
            plugin_name,
            distribution,
            version,
            entry_point=entry_point,
            hooks=tuple(sorted(h.name for h in self.pm.get_hookcallers(plugin) or ())),
        )
        self._cache.clear()
        self.generation += 1
        return plugin_name

    def unregister(self, name: str) -> None:
        self.pm.unregister(name=name)
        self._infos.pop(name, None)
        self._internal.discard(name)
        self._cache.clear()
        self.generation += 1

    def check_pending(self) -> None:
        """Fail on an implementation whose hook name matches no specification (usually a typo)."""
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = self.pm.get_name(exc.plugin) or repr(exc.plugin)
            raise PluginLoadError(f"plugin {name!r} implements an unknown hook: {exc}") from exc

    def plugins(self, *, include_internal: bool = False) -> list[PluginInfo]:
        """Loaded and disabled plugins, by name."""
        return [
            info
            for name, info in sorted(self._infos.items())
            if include_internal or name not in self._internal
        ]

    # -- the typed facade ----------------------------------------------------------------------------------

    def _plugin_of(self, hook_name: str, frames: Iterable[FrameType]) -> str:
        """The plugin whose implementation of ``hook_name`` runs one of ``frames`` (innermost first).

        pluggy runs the implementations itself, so a ``register`` callback or an exception learns which
        plugin is at fault from the stack: each implementation's function has its own code object, and two
        instances of one plugin class (same code) differ by the ``self`` of the frame.
        """
        owners: dict[CodeType, list[tuple[object, str]]] = {}
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
            function = impl.function
            code = getattr(inspect.unwrap(function), "__code__", None)
            if code is not None:
                owners.setdefault(code, []).append((getattr(function, "__self__", None), impl.plugin_name))
        for frame in frames:
            candidates = owners.get(frame.f_code)
            if not candidates:
                continue
            if len(candidates) == 1:
                return candidates[0][1]
            code = frame.f_code
            first = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
            for bound_to, name in candidates:
                if bound_to is first:
                    return name
        return "?"

    @staticmethod
    def _stack() -> Iterable[FrameType]:
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            yield frame
            frame = frame.f_back

    @staticmethod
    def _traceback(tb: TracebackType | None) -> list[FrameType]:
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        return frames[::-1]  # innermost first

    def _dispatch(self, hook_name: str, **kwargs: Any) -> None:
        """Call ``hook_name`` through pluggy; a plugin's failure becomes a PluginLoadError naming it."""
        try:
            getattr(self.pm.hook, hook_name)(**kwargs)
        except (DuplicateRegistrationError, PluginLoadError):
            raise
        except Exception as exc:
            plugin = self._plugin_of(hook_name, self._traceback(exc.__traceback__))
            raise PluginLoadError(
                f"plugin {plugin!r} failed in {hook_name}: {type(exc).__name__}: {exc}"
            ) from exc

    def _collect(
        self, hook_name: str, kind: str, register_with: Callable[[Callable[[str, Any], None]], Any]
    ) -> dict[str, Registered[Any]]:
        """Call a registration hook once and cache ``{name: Registered(thing, plugin)}`` until the registry
        changes. ``register_with(add)`` builds the ``register`` callback the hook receives; it validates
        what a plugin passes and calls ``add(name, thing)``, which rejects a name registered twice."""
        cached: dict[str, Registered[Any]] | None = self._cache.get(hook_name)
        if cached is not None:
            return cached
        found: dict[str, Registered[Any]] = {}

        def add(name: str, thing: Any) -> None:
            plugin = self._plugin_of(hook_name, self._stack())
            if name in found:
                raise DuplicateRegistrationError(
                    f"{kind} {name!r} is registered by both plugin {found[name].plugin!r} and plugin "
                    f"{plugin!r}; disable one with RT_DISABLE_PLUGINS"
                )
            found[name] = Registered(thing, plugin)

        self._dispatch(hook_name, register=register_with(add))
        self._cache[hook_name] = found
        return found

    def _named(self, hook_name: str, kind: str) -> dict[str, Registered[Any]]:
        """A hook whose plugins call ``register(name, factory)``."""

        def register_with(add: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
            def register(name: str, factory: Any) -> None:
                if not isinstance(name, str) or not name:
                    plugin = self._plugin_of(hook_name, self._stack())
                    raise PluginLoadError(f"plugin {plugin!r} registered a {kind} with an empty name")
                if not callable(factory):
                    raise PluginLoadError(
                        f"{kind} {name!r} must be registered with a factory (a callable), got {factory!r}"
                    )
                add(name, factory)

            return register

        return self._collect(hook_name, kind, register_with)

    def _objects(
        self, hook_name: str, kind: str, cls: type[T], key: Callable[[T], str]
    ) -> dict[str, Registered[T]]:
        """A hook whose plugins call ``register(obj)`` with an instance of ``cls``, named by ``key(obj)``."""

        def register_with(add: Callable[[str, Any], None]) -> Callable[[T], None]:
            def register(thing: T) -> None:
                if not isinstance(thing, cls):
                    plugin = self._plugin_of(hook_name, self._stack())
                    raise PluginLoadError(
                        f"plugin {plugin!r} passed {thing!r} to {hook_name}; expected {cls.__name__}"
                    )
                add(key(thing), thing)

            return register

        return self._collect(hook_name, kind, register_with)

    def commands(self) -> dict[str, Registered[Command]]:
        """Subcommands of ``rt`` by name (aliases included)."""
        with_aliases = self._cache.get("commands with aliases")
        if with_aliases is None:
            found = self._objects("rt_register_commands", "command", Command, lambda c: c.name)
            with_aliases = dict(found)
            for registered in found.values():
                for alias in registered.value.aliases:
                    with_aliases.setdefault(alias, registered)
            self._cache["commands with aliases"] = with_aliases
        return with_aliases

    def namespace(self) -> dict[str, Registered[NamespaceEntry]]:
        """Names on ``rt.`` and ``rt.test``, keyed ``"module:name"``."""
        return self._objects(
            "rt_register_namespace", "name", NamespaceEntry, lambda e: f"{e.module}:{e.name}"
        )

    def config_options(self) -> dict[str, Registered[ConfigOption]]:
        return self._objects(
            "rt_register_config_options", "configuration key", ConfigOption, lambda o: o.dotted
        )

    def secret_backends(self) -> dict[str, Registered[Any]]:
        return self._named("rt_register_secret_backends", "secret backend")

    def hmac_algorithms(self) -> dict[str, Registered[Any]]:
        return self._named("rt_register_hmac_algorithms", "HMAC algorithm")

    def reporters(self) -> dict[str, Registered[Any]]:
        return self._named("rt_register_reporters", "test reporter")

    def transports(self) -> dict[str, Registered[Any]]:
        return self._named("rt_register_transports", "transport")

    def compressors(self) -> dict[str, Registered[Any]]:
        return self._named("rt_register_compressors", "compressor")

    def brokers(self) -> dict[str, Registered[Any]]:
        return self._named("rt_register_brokers", "broker")

    def configure(self, config: Any) -> None:
        """``rt_configure``: each plugin in turn, so a failure names its plugin."""
        self._dispatch("rt_configure", config=config)

    def http_request(self, request: Any) -> None:
        """Tell observers an HTTP client is sending ``request``. An observer that raises is logged and
        skipped: logging must never break the request it observes."""
        self._observe("rt_http_request", request=request)

    def http_response(self, response: Any) -> None:
        """Tell observers an HTTP client received ``response`` (status line and headers)."""
        self._observe("rt_http_response", response=response)

    def _isolate_observers(self, plugin: object, plugin_name: str) -> None:
        """Guard this plugin's observer implementations so that one that raises is logged and skipped while
        pluggy goes on to the next: an observer must never break the request it observes, nor hide it from
        the other observers. (Wrappers are left alone: they see the whole call, exceptions included.)"""
        for hook_name in _OBSERVER_HOOKS:
            for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                if impl.plugin is plugin and not (impl.wrapper or impl.hookwrapper):
                    impl.function = _logged(impl.function, plugin_name, hook_name)

    def _observe(self, hook_name: str, **kwargs: Any) -> None:
        """Dispatch an observer hook. Each observer is guarded (:meth:`_isolate_observers`); what can still
        raise here is a wrapper, which is logged like an observer."""
        try:
            getattr(self.pm.hook, hook_name)(**kwargs)
        except Exception as exc:  # noqa: BLE001 - see http_request
            import logging

            plugin = self._plugin_of(hook_name, self._traceback(exc.__traceback__))
            logging.getLogger("rt").exception("plugin %r failed in %s; ignored", plugin, hook_name)

    def has_http_observers(self) -> bool:
        """Whether any plugin implements the observer hooks; when none does, clients skip building events.

        An installed observer may still be switched off by its own configuration (rt-debug's verbose fetch),
        so a True answer means "build the event", not "it will be printed"."""
        return bool(
            self.pm.hook.rt_http_request.get_hookimpls() or self.pm.hook.rt_http_response.get_hookimpls()
        )
