"""rt.Error and rt.CallSite: V8's stack-trace API over Python exceptions (REFERENCE.md "Debugging")."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rt
from rt.kernel import Kernel

STACK_LINE = re.compile(r"^    at (?:(?P<name>.+) \()?(?P<file>.+):(?P<line>\d+):(?P<column>\d+)\)?$")


@pytest.fixture(autouse=True)
def _reset_error_settings(rt_kernel: Kernel) -> Iterator[None]:
    """rt.Error's settings are process-wide, as V8's are: put them back after every test."""
    error = rt.Error
    saved = error.stack_trace_limit, error.prepare_stack_trace
    yield
    error.stack_trace_limit, error.prepare_stack_trace = saved


def _raise_value_error() -> None:
    raise ValueError("bad input")


def _caught(fn: Any, *args: Any) -> BaseException:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("expected an exception")


class Widget:
    def __init__(self, fail: bool = False) -> None:
        if fail:
            raise RuntimeError("construction failed")

    def explode(self) -> None:
        raise KeyError("missing")

    async def explode_async(self) -> None:
        raise LookupError("async")


def test_names_resolve_through_the_kernel() -> None:
    from rt_debug.callsite import CallSite
    from rt_debug.stack import Error

    assert rt.Error is Error
    assert rt.CallSite is CallSite
    assert rt.Error.stack_trace_limit == 10
    assert rt.Error.prepare_stack_trace is None


def test_stack_of_an_exception_is_v8_text_with_columns_from_positions() -> None:
    exc = _caught(_raise_value_error)
    stack = rt.Error.stack(exc)
    lines = stack.splitlines()
    assert lines[0] == "ValueError: bad input"
    first = STACK_LINE.match(lines[1])
    assert first is not None, lines[1]
    assert first["name"] == "_raise_value_error"
    assert first["file"] == __file__
    code = _raise_value_error.__code__
    assert int(first["line"]) == code.co_firstlineno + 1
    assert int(first["column"]) == 5  # `raise` is indented by 4: 1-based column 5
    second = STACK_LINE.match(lines[2])
    assert second is not None and second["name"] == "_caught"
    # every line after the header is a V8 frame line
    assert all(STACK_LINE.match(line) for line in lines[1:])


def test_column_points_at_the_failing_expression_not_the_line_start() -> None:
    def divide() -> float:
        numerator, denominator = 1, 0
        return 2 + numerator / denominator

    exc = _caught(divide)
    frame_line = rt.Error.stack(exc).splitlines()[1]
    match = STACK_LINE.match(frame_line)
    assert match is not None
    source = Path(__file__).read_text(encoding="utf-8").splitlines()[int(match["line"]) - 1]
    assert source[int(match["column"]) - 1 :].startswith("numerator / denominator")
    assert match["name"].endswith("<locals>.divide")


def test_stack_is_formatted_once_and_kept() -> None:
    calls: list[int] = []

    def prepare(err: Any, sites: list[Any]) -> str:
        calls.append(len(sites))
        return "custom"

    rt.Error.prepare_stack_trace = prepare
    exc = _caught(_raise_value_error)
    assert rt.Error.stack(exc) == "custom"
    assert rt.Error.stack(exc) == "custom"
    assert len(calls) == 1


def test_prepare_stack_trace_receives_call_sites_and_its_value_becomes_the_stack_whatever_its_type() -> None:
    received: dict[str, Any] = {}
    marker = object()

    def prepare(err: Any, sites: list[Any]) -> object:
        received["err"], received["sites"] = err, sites
        return {"marker": marker}

    rt.Error.prepare_stack_trace = prepare
    exc = _caught(Widget().explode)
    stack = rt.Error.stack(exc)
    assert stack == {"marker": marker}
    assert received["err"] is exc
    sites = received["sites"]
    assert all(isinstance(site, rt.CallSite) for site in sites)
    assert sites[0].get_function_name() == "explode"


def test_prepare_stack_trace_that_raises_makes_reading_the_stack_raise() -> None:
    def prepare(err: Any, sites: list[Any]) -> str:
        raise RuntimeError("hook failed")

    rt.Error.prepare_stack_trace = prepare
    exc = _caught(_raise_value_error)
    with pytest.raises(RuntimeError, match="hook failed"):
        rt.Error.stack(exc)
    holder = type("Holder", (), {})()
    rt.Error.capture_stack_trace(holder)  # does not raise at capture ...
    assert not hasattr(holder, "stack")
    with pytest.raises(RuntimeError, match="hook failed"):  # ... reading does
        rt.Error.stack(holder)


def test_a_failing_hook_on_a_second_capture_removes_the_earlier_stack() -> None:
    holder = type("Holder", (), {})()
    rt.Error.capture_stack_trace(holder)  # no hook: a V8 stack
    assert isinstance(holder.stack, str)

    def prepare(err: Any, sites: list[Any]) -> str:
        raise RuntimeError("hook failed")

    rt.Error.prepare_stack_trace = prepare
    rt.Error.capture_stack_trace(holder)
    assert not hasattr(holder, "stack"), "the first capture's stack must not pass for the second"
    with pytest.raises(RuntimeError, match="hook failed"):
        rt.Error.stack(holder)


def test_stack_trace_limit_caps_frames() -> None:
    def recurse(n: int) -> None:
        if n == 0:
            raise ValueError("deep")
        recurse(n - 1)

    rt.Error.stack_trace_limit = 3
    lines = rt.Error.stack(_caught(recurse, 20)).splitlines()
    assert len(lines) == 1 + 3
    rt.Error.stack_trace_limit = 0
    assert rt.Error.stack(_caught(recurse, 5)) == "ValueError: deep"
    rt.Error.stack_trace_limit = 50
    assert len(rt.Error.stack(_caught(recurse, 20)).splitlines()) > 21


def test_an_exception_never_raised_has_only_its_header() -> None:
    assert rt.Error.stack(ValueError("fresh")) == "ValueError: fresh"
    assert rt.Error.stack(KeyboardInterrupt()) == "KeyboardInterrupt"


def test_stack_rejects_objects_that_are_not_errors() -> None:
    with pytest.raises(TypeError, match="expects an exception"):
        rt.Error.stack(42)


# -- capture_stack_trace: cut, limit -----------------------------------------------------------------------


def outer(target: Any, start: Any) -> None:
    middle(target, start)


def middle(target: Any, start: Any) -> None:
    inner(target, start)


def inner(target: Any, start: Any) -> None:
    rt.Error.capture_stack_trace(target, start)


def _names(stack: str) -> list[str]:
    names = []
    for line in stack.splitlines()[1:]:
        match = STACK_LINE.match(line)
        assert match is not None, line
        names.append(match["name"])
    return names


def test_capture_without_start_fn_starts_at_the_caller() -> None:
    holder = type("Holder", (), {})()
    outer(holder, None)
    assert holder.stack.splitlines()[0] == "Error"
    assert _names(holder.stack)[:3] == ["inner", "middle", "outer"]


def test_capture_cuts_start_fn_and_every_frame_above_it() -> None:
    holder = type("Holder", (), {})()
    outer(holder, middle)
    names = _names(holder.stack)
    assert names[0] == "outer"
    assert "inner" not in names and "middle" not in names


def test_capture_with_start_fn_not_on_the_stack_leaves_only_the_header() -> None:
    holder = type("Holder", (), {"name": "Custom", "message": "msg"})()
    outer(holder, _raise_value_error)
    assert holder.stack == "Custom: msg"


def test_capture_cut_sees_through_bound_methods() -> None:
    class Service:
        def call(self, target: Any) -> None:
            inner(target, self.call)

    holder = type("Holder", (), {})()
    Service().call(holder)
    assert _names(holder.stack)[0].startswith("test_capture_cut_sees_through_bound_methods")


def test_limit_applies_after_the_cut() -> None:
    rt.Error.stack_trace_limit = 1
    holder = type("Holder", (), {})()
    outer(holder, middle)
    assert _names(holder.stack) == ["outer"]


def test_capture_on_an_exception_uses_its_name_and_message() -> None:
    exc = ValueError("explicit")
    outer(exc, None)
    assert exc.stack.splitlines()[0] == "ValueError: explicit"  # type: ignore[attr-defined]
    assert rt.Error.stack(exc) == exc.stack  # type: ignore[attr-defined]


def test_capture_refuses_objects_without_attributes() -> None:
    with pytest.raises(TypeError, match="accepts attributes"):
        rt.Error.capture_stack_trace(object())


def test_error_is_a_namespace_not_an_exception() -> None:
    with pytest.raises(TypeError, match="namespace"):
        rt.Error()


# -- CallSite methods --------------------------------------------------------------------------------------


def _sites(exc: BaseException) -> list[Any]:
    captured: list[Any] = []
    rt.Error.prepare_stack_trace = lambda err, sites: captured.extend(sites) or "x"
    rt.Error.stack(exc)
    rt.Error.prepare_stack_trace = None
    return captured


def test_callsite_of_a_method() -> None:
    widget = Widget()
    site = _sites(_caught(widget.explode))[0]
    assert site.get_this() is widget
    assert site.get_type_name() == "Widget"
    assert site.get_function() is Widget.explode
    assert site.get_function_name() == "explode"
    assert site.get_method_name() == "explode"
    assert site.get_file_name() == __file__
    assert site.get_script_name_or_source_url() == __file__
    assert site.get_line_number() == Widget.explode.__code__.co_firstlineno + 1
    assert site.get_column_number() == 9
    assert site.get_eval_origin() is None
    assert site.is_toplevel() is False
    assert site.is_eval() is False
    assert site.is_native() is False
    assert site.is_constructor() is False
    assert site.is_async() is False
    assert site.is_promise_all() is False
    assert site.get_promise_index() is None
    assert str(site) == f"Widget.explode ({__file__}:{site.get_line_number()}:9)"


def test_callsite_of_a_plain_function_is_toplevel() -> None:
    site = _sites(_caught(_raise_value_error))[0]
    assert site.get_this() is None
    assert site.get_type_name() is None
    assert site.get_method_name() is None
    assert site.is_toplevel() is True
    assert site.get_function() is _raise_value_error


def test_callsite_of_a_constructor() -> None:
    site = _sites(_caught(Widget, True))[0]
    assert site.is_constructor() is True
    assert str(site).startswith("new Widget (")


def test_callsite_of_a_classmethod_has_the_class_as_this() -> None:
    class Factory:
        @classmethod
        def build(cls) -> None:
            raise ValueError("no")

    site = _sites(_caught(Factory.build))[0]
    assert site.get_this() is Factory
    assert site.get_type_name() == "Factory"
    assert site.get_function() is Factory.__dict__["build"].__func__


@pytest.mark.anyio
async def test_callsite_of_an_async_function() -> None:
    widget = Widget()
    errors: list[BaseException] = []
    for _ in range(2):
        try:
            await widget.explode_async()
        except LookupError as exc:
            errors.append(exc)
    sites = _sites(errors[0])
    assert sites[0].is_async() is True
    assert str(sites[0]).startswith("async Widget.explode_async (")
    assert "\n    at async Widget.explode_async (" in rt.Error.stack(errors[1])


def test_callsite_of_eval_code() -> None:
    exc = _caught(eval, "1 / 0")
    site = _sites(exc)[0]
    assert site.is_eval() is True
    assert site.get_function_name() is None  # module-level code of the string


def test_callsite_returns_none_once_the_function_and_receiver_are_gone() -> None:
    def make() -> Any:
        def doomed() -> None:
            raise ValueError("gone")

        class Receiver:
            def fail(self) -> None:
                doomed()

        return Receiver()

    receiver = make()
    exc = _caught(receiver.fail)
    sites = _sites(exc)
    assert sites[0].get_function_name() == "doomed"
    assert sites[0].get_function() is not None
    assert sites[1].get_this() is receiver
    del exc, receiver
    gc.collect()
    assert sites[0].get_function() is None
    assert sites[1].get_this() is None
    assert sites[1].get_type_name() is None
    # what does not need the objects still answers
    assert sites[0].get_function_name() == "doomed"
    assert sites[0].get_line_number() > 0
