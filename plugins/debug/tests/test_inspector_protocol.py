"""The inspector's sans-I/O parts: --inspect values, HTTP decisions, remote objects, flags before the script."""

from __future__ import annotations

import argparse
import json
import uuid
from pathlib import Path

import pytest

from rt_debug.inspector.address import InspectAddress, InspectValueError, parse_inspect_value
from rt_debug.inspector.endpoints import answer, host_allowed, origin_allowed
from rt_debug.inspector.flags import add_inspect_options, inspect_address
from rt_debug.inspector.remote import RemoteObjects


@pytest.mark.parametrize(
    ("value", "host", "port", "path"),
    [
        ("", "localhost", 6499, None),
        ("7000", "localhost", 7000, None),
        ("0.0.0.0:7000", "0.0.0.0", 7000, None),
        ("127.0.0.1:7000/secret", "127.0.0.1", 7000, "/secret"),
        ("ws://localhost:1234/a/b", "localhost", 1234, "/a/b"),
        ("[::1]:9229", "::1", 9229, None),
        ("myhost", "myhost", 6499, None),
    ],
)
def test_inspect_values(value: str, host: str, port: int, path: str | None) -> None:
    address = parse_inspect_value(value)
    assert (address.host, address.port) == (host, port)
    if path is None:
        uuid.UUID(address.path[1:])  # a random UUID when no path is given
    else:
        assert address.path == path


@pytest.mark.parametrize("value", ["localhost:99999", "localhost:http", "[::1", "host:1/a b"])
def test_bad_inspect_values(value: str) -> None:
    with pytest.raises(InspectValueError, match="--inspect"):
        parse_inspect_value(value)


def test_each_run_gets_its_own_path() -> None:
    assert parse_inspect_value("").path != parse_inspect_value("").path


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        (None, True),
        ("localhost:6499", True),
        ("127.0.0.1:6499", True),
        ("[::1]:6499", True),
        ("10.0.0.5:6499", True),
        ("evil.example", False),
        ("evil.example:6499", False),
        ("localhost.evil.example", False),
        ("", False),
    ],
)
def test_host_check(host: str | None, allowed: bool) -> None:
    assert host_allowed(host, "localhost") is allowed


def test_host_check_accepts_the_bound_name() -> None:
    assert host_allowed("devbox:6499", "devbox")
    assert not host_allowed("devbox:6499", "localhost")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("http://localhost:3000", True),
        ("http://127.0.0.1", True),
        ("https://[::1]:8080", True),
        ("https://evil.example", False),
        ("null", False),
        ("http://localhost.evil.example", False),
    ],
)
def test_origin_check(origin: str | None, allowed: bool) -> None:
    assert origin_allowed(origin) is allowed


def _answer(method: str, path: str, **headers: str) -> tuple[str, int, str]:
    address = InspectAddress("localhost", 6499, "/secret")
    result = answer(
        method,
        path,
        {"host": "localhost:6499", **headers},
        address=address,
        port=6499,
        version={"Protocol-Version": "1.3"},
        title="t",
        script_url="file:///app.py",
    )
    return result.kind, result.status, result.body


def test_http_answers() -> None:
    assert _answer("GET", "/json/version") == ("json", 200, '{"Protocol-Version": "1.3"}')
    kind, _, body = _answer("GET", "/json/list")
    assert kind == "json" and json.loads(body)[0]["webSocketDebuggerUrl"] == "ws://localhost:6499/secret"
    assert _answer("GET", "/secret", upgrade="websocket")[0] == "upgrade"
    assert _answer("GET", "/secret")[:2] == ("status", 426)
    assert _answer("GET", "/other", upgrade="websocket")[:2] == ("status", 404)
    assert _answer("POST", "/json/version")[:2] == ("status", 404)
    assert _answer("GET", "/secret", upgrade="websocket", host="evil.example")[:2] == ("status", 400)
    assert _answer("GET", "/secret", upgrade="websocket", origin="https://evil.example")[:2] == (
        "status",
        403,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_inspect_options(parser)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    return parser


@pytest.mark.parametrize(
    ("argv", "mode", "script", "rest"),
    [
        (["--inspect", "app.py"], "inspect", "app.py", []),
        (["--inspect=9000", "app.py", "x"], "inspect", "app.py", ["x"]),
        (["--inspect-brk", "app.py", "--inspect"], "brk", "app.py", ["--inspect"]),
        (["--inspect-wait=h:1/p", "app.py"], "wait", "app.py", []),
        (["app.py"], None, "app.py", []),
        (["--workers", "2", "--inspect", "app.py"], "inspect", "app.py", []),
        (["--quiet", "--inspect-wait", "app.py"], "wait", "app.py", []),
    ],
)
def test_a_bare_flag_never_takes_the_script_for_its_value(
    argv: list[str], mode: str | None, script: str, rest: list[str]
) -> None:
    args = _parser().parse_args(argv)
    assert (args.script, args.args) == (script, rest)
    address = inspect_address(args)
    assert (address.mode if address else None) == mode


def test_remote_objects_by_value_by_id_and_released() -> None:
    objects = RemoteObjects()
    assert objects.wrap(None) == {"type": "object", "subtype": "null", "value": None}
    assert objects.wrap(True) == {"type": "boolean", "value": True}
    assert objects.wrap(2**60)["type"] == "bigint"
    assert objects.wrap(float("nan"))["unserializableValue"] == "NaN"
    assert objects.wrap("s") == {"type": "string", "value": "s"}
    remote = objects.wrap({"a": [1, 2]}, "g", with_preview=True)
    assert remote["subtype"] == "map" and remote["preview"]["properties"] == [
        {"name": "a", "type": "object", "value": "list(2)", "subtype": "array"}
    ]
    inner = objects.properties(remote["objectId"], "g")[0]["value"]
    assert [p["name"] for p in objects.properties(inner["objectId"], "g")] == ["0", "1"]
    assert len(objects) == 2
    objects.release_group("g")
    assert len(objects) == 0
    assert objects.wrap(len)["type"] == "function"


def test_a_broken_repr_does_not_break_a_preview() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    remote = RemoteObjects().wrap(Broken(), with_preview=True)
    assert remote["description"].startswith("<Broken") and remote["preview"]["properties"] == []


def test_with_a_breakpoint_in_one_file_only_that_files_frames_are_traced(tmp_path: Path) -> None:
    import importlib.util
    import sys

    from rt_debug.inspector.scripts import Scripts
    from rt_debug.inspector.tracer import Breakpoint, Tracer

    probe = "import sys\n\ndef frame_trace():\n    return sys._getframe().f_trace\n\ndef idle():\n    pass\n"
    modules = {}
    for name in ("traced_file_for_tracer", "untraced_file_for_tracer"):
        path = tmp_path / f"{name}.py"
        path.write_text(probe, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    events: list[tuple[str, dict[str, object]]] = []
    tracer = Tracer(RemoteObjects(), Scripts(lambda params: None), lambda m, p: events.append((m, p)))
    tracer.attached = True
    traced = str(tmp_path / "traced_file_for_tracer.py")
    tracer.add_breakpoint(Breakpoint("bp", traced, 7, condition="False"))  # in idle(): never stops
    saved = sys.gettrace()
    try:
        tracer.sync(None)
        in_traced = modules["traced_file_for_tracer"].frame_trace()
        in_other = modules["untraced_file_for_tracer"].frame_trace()
        tracer.remove_breakpoint("bp")
        tracer.sync(None)
        after = modules["traced_file_for_tracer"].frame_trace()
        installed = sys.gettrace()
    finally:
        sys.settrace(saved)
    assert in_traced is not None  # the file with a breakpoint gets line events
    assert in_other is None  # any other file's frames run without a local trace function
    assert after is None and installed is None  # no breakpoint left: no trace function at all
    assert events == []
