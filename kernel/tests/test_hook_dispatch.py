"""Every hook is dispatched by pluggy (``pm.hook.<name>(...)``), so pluggy's own machinery sees every call:
tracing, call monitoring, and ``wrapper=True`` implementations around the plugins' implementations."""

from __future__ import annotations

import hashlib

import pytest

from rt.config import Config
from rt.errors import PluginLoadError
from rt.events import HttpRequest
from rt.hookspecs import hookimpl
from rt.kernel import Kernel


def bare_kernel(*plugins: tuple[str, object]) -> Kernel:
    return Kernel(Config(environ={}), load_entry_points=False, plugins=plugins)


class Sha:
    @hookimpl
    def rt_register_hmac_algorithms(self, register):
        register("sha-test", hashlib.sha256)

    @hookimpl
    def rt_http_request(self, request):
        pass


def test_pluggy_tracing_sees_every_facade_call():
    kernel = bare_kernel(("sha", Sha()))
    traced: list[str] = []
    kernel.host.pm.trace.root.setwriter(traced.append)
    undo = kernel.host.pm.enable_tracing()
    try:
        kernel.register(object(), "empty")  # invalidates the caches, so the next facade calls dispatch again
        kernel.host.hmac_algorithms()
        kernel.host.http_request(HttpRequest("GET", "http://127.0.0.1/", []))
        kernel.host.configure(kernel.config)
    finally:
        undo()
    text = "".join(traced)
    for hook in ("rt_register_hmac_algorithms", "rt_http_request", "rt_configure"):
        assert f"{hook} [hook]" in text, text


def test_call_monitoring_sees_registration_hooks():
    kernel = bare_kernel(("sha", Sha()))
    kernel.register(object(), "empty")
    called: list[str] = []
    undo = kernel.host.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: called.append(name), lambda *a: None
    )
    try:
        kernel.host.hmac_algorithms()
        kernel.host.transports()
    finally:
        undo()
    assert called == ["rt_register_hmac_algorithms", "rt_register_transports"]


def test_a_wrapper_implementation_runs_around_the_others():
    """``wrapper=True`` works (it is not refused): it runs before and after the plain implementations and
    sees their result, as pluggy documents."""
    events: list[str] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def rt_register_hmac_algorithms(self, register):
            events.append("before")
            register("wrapped-first", hashlib.sha256)
            result = yield
            events.append("after")
            return result

    class Plain:
        @hookimpl
        def rt_register_hmac_algorithms(self, register):
            events.append("plain")
            register("plain", hashlib.sha256)

    kernel = bare_kernel(("wrapper", Wrapper()), ("plain", Plain()))
    registered = kernel.host.hmac_algorithms()
    assert events == ["before", "plain", "after"]
    assert {name: r.plugin for name, r in registered.items()} == {
        "wrapped-first": "wrapper",
        "plain": "plain",
    }


def test_a_wrapper_sees_a_failing_implementation_and_the_error_names_the_plugin():
    seen: list[BaseException] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def rt_configure(self, config):
            try:
                return (yield)
            except Exception as exc:
                seen.append(exc)
                raise

    class Broken:
        @hookimpl
        def rt_configure(self, config):
            raise RuntimeError("bad config")

    with pytest.raises(
        PluginLoadError, match="plugin 'broken' failed in rt_configure: RuntimeError: bad config"
    ):
        bare_kernel(("wrapper", Wrapper()), ("broken", Broken()))
    assert [str(exc) for exc in seen] == ["bad config"]


def test_two_instances_of_one_plugin_class_are_told_apart():
    from rt.errors import DuplicateRegistrationError

    kernel = bare_kernel(("first", Sha()), ("second", Sha()))
    with pytest.raises(
        DuplicateRegistrationError, match="both plugin '(first|second)' and plugin '(?!\1)(first|second)'"
    ):
        kernel.host.hmac_algorithms()
