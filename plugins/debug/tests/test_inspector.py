"""`rt run --inspect*`: a real client (a WebSocket, the message sequence of REFERENCE.md) against real programs."""

from __future__ import annotations

import json
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspector_client import Client, Program, rt_program
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect


def _script(directory: Path, body: str, name: str = "script.py") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def _line(script: Path, marker: str) -> int:
    """The 0-based line of the first line holding ``marker`` (the protocol counts lines from 0)."""
    return next(i for i, text in enumerate(script.read_text().splitlines()) if marker in text)


@pytest.fixture
def programs() -> Iterator[list[Program]]:
    started: list[Program] = []
    yield started
    for program in started:
        program.kill()


def _start(
    programs: list[Program], script: Path, *flags: str, args: tuple[str, ...] = ()
) -> tuple[Program, Client]:
    program = rt_program(script, *flags, cwd=script.parent, args=args)
    programs.append(program)
    return program, Client(program.url())


def _get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


# -- the banner and the HTTP endpoints -------------------------------------------------------------------


def test_banner_endpoints_and_the_checks_of_host_and_origin(tmp_path: Path, programs: list[Program]) -> None:
    script = _script(tmp_path, "print('ran')\n")
    program = rt_program(script, "--inspect-wait=127.0.0.1:0", cwd=tmp_path)
    programs.append(program)
    url = program.url()
    lines = program.stderr.splitlines()
    rule = lines[0]
    assert set(rule) == {"-", " ", "r", "t", "I", "n", "s", "p", "e", "c", "o"} and rule.startswith("-----")
    assert lines[1:6] == ["Listening:", f"  {url}", "Inspect in browser:", lines[4], rule]
    assert lines[4].startswith("  https://") and lines[4].endswith(url[len("ws://") :])
    path = url.split("/", 3)[3]
    assert len(path) == 36 and path.count("-") == 4  # a random UUID: the path is a capability
    base = program.http_base()
    status, body = _get(f"{base}/json/version")
    assert status == 200 and json.loads(body)["Protocol-Version"] == "1.3"
    status, body = _get(f"{base}/json/list")
    assert status == 200 and json.loads(body)[0]["webSocketDebuggerUrl"] == url
    assert _get(f"{base}/not-the-path")[0] == 404
    assert _get(f"{base}/json/version", Host="evil.example")[0] == 400  # DNS rebinding
    assert _get(f"{base}/json/version", Host="localhost:1234")[0] == 200
    assert _get(f"{base}/json/version", Origin="https://evil.example")[0] == 403
    assert _get(f"{base}/json/version", Origin="http://localhost:3000")[0] == 200
    with pytest.raises(InvalidStatus) as refused:
        connect(base.replace("http", "ws") + "/guessed-path", open_timeout=10)
    assert refused.value.response.status_code == 404
    with pytest.raises(InvalidStatus) as cross_site:
        connect(url, origin="https://evil.example", open_timeout=10)  # type: ignore[arg-type]
    assert cross_site.value.response.status_code == 403
    assert "ran" not in program.stdout  # --inspect-wait: nothing ran without a client


def test_inspect_wait_runs_nothing_until_initialized(tmp_path: Path, programs: list[Program]) -> None:
    marker = tmp_path / "started"
    script = _script(tmp_path, f"open({str(marker)!r}, 'w').close()\nprint('done')\n")
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    for method, params in (*__import__("inspector_client").HANDSHAKE,):
        client.call(method, **params)
    time.sleep(0.5)
    assert not marker.exists()
    client.call("Inspector.initialized")
    assert program.wait() == 0
    assert marker.exists() and program.stdout == "done\n"


def test_not_loopback_warns(tmp_path: Path, programs: list[Program]) -> None:
    script = _script(tmp_path, "pass\n")
    program = rt_program(script, "--inspect=0.0.0.0:0", cwd=tmp_path)
    programs.append(program)
    assert program.wait() == 0
    assert "rt: warning: the inspector listens on 0.0.0.0, not on a loopback address" in program.stderr


def test_bad_value_is_a_one_line_error(tmp_path: Path, programs: list[Program]) -> None:
    script = _script(tmp_path, "pass\n")
    program = rt_program(script, "--inspect=localhost:99999", cwd=tmp_path)
    programs.append(program)
    assert program.wait() == 2
    assert (
        program.stderr
        == "rt run: --inspect: the port must be a number from 0 to 65535, got 'localhost:99999'\n"
    )


# -- breakpoints, stepping, evaluation -------------------------------------------------------------------

FUNCTIONS = """\
import helper_for_inspector


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self, by):
        self.count += by  # method line
        return self.count


def add(a, b):
    total = a + b  # add line
    return total


def main():
    counter = Counter()
    acc = 0
    for item in [1, 2, 3]:
        acc = add(acc, item)  # loop line
        counter.bump(item)
    late = helper_for_inspector.twice(acc)
    print("result", acc, counter.count, late)


main()
"""

HELPER = """\
def twice(value):
    doubled = value * 2  # helper line
    return doubled
"""


def _functions(tmp_path: Path) -> Path:
    _script(tmp_path, HELPER, name="helper_for_inspector.py")
    return _script(tmp_path, FUNCTIONS)


def _top(paused: dict[str, Any]) -> dict[str, Any]:
    return paused["callFrames"][0]  # type: ignore[no-any-return]


def test_inspect_brk_pauses_on_the_first_line_then_runs_to_completion(
    tmp_path: Path, programs: list[Program]
) -> None:
    script = _functions(tmp_path)
    program, client = _start(programs, script, "--inspect-brk=127.0.0.1:0")
    client.handshake()
    parsed = client.event("Debugger.scriptParsed", url=str(script))
    paused = client.paused()
    assert paused["reason"] == "PauseOnNextStatement"
    frame = _top(paused)
    assert frame["location"] == {"scriptId": parsed["scriptId"], "lineNumber": 0, "columnNumber": 0}
    assert frame["functionName"] == "<module>"
    source = client.call("Debugger.getScriptSource", scriptId=parsed["scriptId"])["scriptSource"]
    assert source == script.read_text()
    assert client.call("Runtime.evaluate", expression="1 + 1")["result"] == {
        "type": "number",
        "value": 2,
        "description": "2",
    }
    client.call("Debugger.resume")
    client.event("Debugger.resumed")
    assert program.wait() == 0
    assert program.stdout == "result 6 6 12\n"
    client.drain_until_closed()


def test_breakpoint_in_a_function_steps_and_evaluates(tmp_path: Path, programs: list[Program]) -> None:
    script = _functions(tmp_path)
    program, client = _start(programs, script, "--inspect-brk=127.0.0.1:0")
    add_line = _line(script, "# add line")
    client.handshake(
        ("Debugger.setBreakpointByUrl", {"url": str(script), "lineNumber": add_line, "columnNumber": 0})
    )
    assert client.paused()["reason"] == "PauseOnNextStatement"
    client.call("Debugger.resume")
    paused = client.paused()
    assert paused["reason"] == "Breakpoint"
    assert paused["data"]["breakpointId"] == f"{script}:{add_line}:0"
    frame = _top(paused)
    assert frame["functionName"] == "add" and frame["location"]["lineNumber"] == add_line
    assert [f["functionName"] for f in paused["callFrames"]] == ["add", "main", "<module>"]
    # locals, and the caller's scopes, expand through Runtime.getProperties
    local = client.locals_of(frame)
    assert local["a"] == {"type": "number", "value": 0, "description": "0"}
    assert local["b"]["value"] == 1
    assert [s["type"] for s in frame["scopeChain"]] == ["local", "global"]
    caller = client.locals_of(paused["callFrames"][1])
    assert caller["counter"]["className"] == "Counter" and caller["counter"]["preview"]["properties"] == [
        {"name": "count", "type": "number", "value": "0"}
    ]
    counter = client.properties(caller["counter"]["objectId"])
    assert counter == {"count": {"type": "number", "value": 0, "description": "0"}}
    # evaluate in the paused frame and in a caller's
    on_frame = client.call(
        "Debugger.evaluateOnCallFrame", callFrameId=frame["callFrameId"], expression="a + b * 10"
    )
    assert on_frame == {"result": {"type": "number", "value": 10, "description": "10"}, "wasThrown": False}
    on_caller = client.call(
        "Debugger.evaluateOnCallFrame",
        callFrameId=paused["callFrames"][1]["callFrameId"],
        expression="[acc, item]",
        generatePreview=True,
    )["result"]
    assert on_caller["subtype"] == "array" and on_caller["size"] == 2
    assert [p["value"] for p in on_caller["preview"]["properties"]] == ["0", "1"]
    thrown = client.call("Debugger.evaluateOnCallFrame", callFrameId=frame["callFrameId"], expression="a / 0")
    assert thrown["wasThrown"] is True and thrown["result"]["subtype"] == "error"
    assert thrown["result"]["description"] == "ZeroDivisionError: division by zero"
    # step over: the next line of add
    client.call("Debugger.stepOver")
    client.event("Debugger.resumed")
    paused = client.paused()
    assert paused["reason"] == "other" and _top(paused)["location"]["lineNumber"] == add_line + 1
    assert client.locals_of(_top(paused))["total"]["value"] == 1
    # step out: back in main, after the call
    client.call("Debugger.stepOut")
    paused = client.paused()
    assert _top(paused)["functionName"] == "main"
    assert _top(paused)["location"]["lineNumber"] == _line(script, "counter.bump(item)")
    # step into: the method
    client.call("Debugger.stepInto")
    paused = client.paused()
    assert _top(paused)["functionName"] == "Counter.bump"
    assert _top(paused)["location"]["lineNumber"] == _line(script, "# method line")
    this = _top(paused)["this"]
    assert this["className"] == "Counter" and this["type"] == "object"
    assert this["preview"]["properties"] == [{"name": "count", "type": "number", "value": "0"}]  # before +=
    # stepNext (the reference's name for step over) over the rest, then remove the breakpoint and run to the end
    client.call("Debugger.stepNext")
    assert _top(client.paused())["location"]["lineNumber"] == _line(script, "return self.count")
    client.call("Debugger.removeBreakpoint", breakpointId=f"{script}:{add_line}:0")
    client.call("Debugger.resume")
    assert program.wait() == 0
    assert program.stdout == "result 6 6 12\n"


def test_conditional_breakpoint_in_a_loop_and_in_a_class_method(
    tmp_path: Path, programs: list[Program]
) -> None:
    script = _functions(tmp_path)
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    loop_line = _line(script, "# loop line")
    method_line = _line(script, "# method line")
    client.handshake(
        (
            "Debugger.setBreakpointByUrl",
            {
                "url": str(script),
                "lineNumber": loop_line,
                "columnNumber": 0,
                "options": {"condition": "item == 3"},
            },
        ),
        (
            "Debugger.setBreakpointByUrl",
            {"url": f"file://{script}", "lineNumber": method_line, "condition": "by >= 2"},
        ),
    )
    paused = client.paused()
    assert paused["reason"] == "Breakpoint" and _top(paused)["location"]["lineNumber"] == method_line
    assert client.locals_of(_top(paused))["by"]["value"] == 2  # by == 1 did not stop
    client.call("Debugger.resume")
    paused = client.paused()
    assert _top(paused)["location"]["lineNumber"] == loop_line
    local = client.locals_of(_top(paused))
    assert local["item"]["value"] == 3 and local["acc"]["value"] == 3
    client.call("Debugger.resume")
    paused = client.paused()
    assert _top(paused)["location"]["lineNumber"] == method_line  # by == 3
    client.call("Debugger.setBreakpointsActive", active=False)
    client.call("Debugger.resume")
    assert program.wait() == 0


def test_breakpoint_in_a_module_imported_later(tmp_path: Path, programs: list[Program]) -> None:
    script = _functions(tmp_path)
    helper = tmp_path / "helper_for_inspector.py"
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    line = _line(helper, "# helper line")
    client.handshake(
        ("Debugger.setBreakpointByUrl", {"url": str(helper), "lineNumber": line, "columnNumber": 0})
    )
    parsed = client.event("Debugger.scriptParsed", url=str(helper))
    resolved = client.event("Debugger.breakpointResolved")
    assert resolved == {
        "breakpointId": f"{helper}:{line}:0",
        "location": {"scriptId": parsed["scriptId"], "lineNumber": line, "columnNumber": 0},
    }
    paused = client.paused()
    assert (
        _top(paused)["functionName"] == "twice" and _top(paused)["location"]["scriptId"] == parsed["scriptId"]
    )
    assert client.locals_of(_top(paused))["value"]["value"] == 6
    client.call("Debugger.resume")
    assert program.wait() == 0


def test_set_breakpoint_by_script_id_and_continue_to_location(
    tmp_path: Path, programs: list[Program]
) -> None:
    script = _functions(tmp_path)
    program, client = _start(programs, script, "--inspect-brk=127.0.0.1:0")
    client.handshake()
    script_id = client.event("Debugger.scriptParsed", url=str(script))["scriptId"]
    client.paused()
    blank = (
        len(script.read_text().splitlines()) - 2
    )  # a blank line resolves to the next line with code: main()
    reply = client.call("Debugger.setBreakpoint", location={"scriptId": script_id, "lineNumber": blank})
    assert reply["actualLocation"] == {"scriptId": script_id, "lineNumber": blank + 1, "columnNumber": 0}
    client.call("Debugger.resume")
    paused = client.paused()
    assert _top(paused)["location"]["lineNumber"] == blank + 1 and paused["reason"] == "Breakpoint"
    target = _line(script, 'print("result"')
    client.call("Debugger.continueToLocation", location={"scriptId": script_id, "lineNumber": target})
    paused = client.paused()
    assert _top(paused)["location"]["lineNumber"] == target and _top(paused)["functionName"] == "main"
    client.call("Debugger.resume")
    assert program.wait() == 0


ASYNC = """\
import sys

import anyio


async def fetch(n):
    await anyio.sleep(0)
    value = n * 10  # fetch line
    await anyio.sleep(0)
    return value + 1


async def main():
    got = await fetch(4)
    print("got", got)


anyio.run(main, backend=sys.argv[1])
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_breakpoint_and_steps_in_an_async_function(
    tmp_path: Path, programs: list[Program], backend: str
) -> None:
    script = _script(tmp_path, ASYNC)
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0", args=(backend,))
    line = _line(script, "# fetch line")
    client.handshake(
        ("Debugger.setBreakpointByUrl", {"url": str(script), "lineNumber": line, "columnNumber": 0})
    )
    paused = client.paused()
    frame = _top(paused)
    assert frame["functionName"] == "fetch" and frame["location"]["lineNumber"] == line
    assert client.locals_of(frame)["n"]["value"] == 4
    client.call("Debugger.stepOver")
    assert _top(client.paused())["location"]["lineNumber"] == line + 1
    client.call(
        "Debugger.stepOver"
    )  # over an await: the event loop runs, the step ends in the same coroutine
    paused = client.paused()
    assert _top(paused)["functionName"] == "fetch" and _top(paused)["location"]["lineNumber"] == line + 2
    assert client.locals_of(_top(paused))["value"]["value"] == 40
    client.call("Debugger.stepOut")
    paused = client.paused()
    assert _top(paused)["functionName"] == "main"
    assert _top(paused)["location"]["lineNumber"] == _line(script, 'print("got"')
    client.call("Debugger.resume")
    assert program.wait() == 0
    assert program.stdout == "got 41\n"


# -- exceptions ------------------------------------------------------------------------------------------

EXCEPTIONS = """\
def check(value):
    if value < 0:
        raise ValueError(f"negative: {value}")  # raise line
    return value


try:
    check(-1)
except ValueError:
    pass
check(-2)
"""


def test_pause_on_all_exceptions_stops_at_a_caught_one(tmp_path: Path, programs: list[Program]) -> None:
    script = _script(tmp_path, EXCEPTIONS)
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    client.handshake(("Debugger.setPauseOnExceptions", {"state": "all"}))
    paused = client.paused()
    assert paused["reason"] == "exception"
    assert (
        paused["data"]["description"] == "ValueError: negative: -1" and paused["data"]["subtype"] == "error"
    )
    assert _top(paused)["location"]["lineNumber"] == _line(script, "# raise line")
    client.call("Debugger.resume")
    paused = client.paused()
    assert paused["data"]["description"] == "ValueError: negative: -2"
    client.call("Debugger.resume")
    assert program.wait() == 1
    assert "ValueError: negative: -2" in program.stderr


def test_pause_on_uncaught_exceptions_skips_caught_ones(tmp_path: Path, programs: list[Program]) -> None:
    script = _script(tmp_path, EXCEPTIONS)
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    client.handshake(("Debugger.setPauseOnExceptions", {"state": "uncaught"}))
    paused = client.paused()
    assert paused["reason"] == "exception" and paused["data"]["description"] == "ValueError: negative: -2"
    frame = _top(paused)
    assert frame["functionName"] == "check" and frame["location"]["lineNumber"] == _line(
        script, "# raise line"
    )
    assert client.locals_of(frame)["value"]["value"] == -2  # the frame still holds its variables
    error = client.properties(paused["data"]["objectId"])
    assert error["message"]["value"] == "negative: -2"
    client.call("Debugger.resume")
    assert program.wait() == 1
    assert program.stderr.count("ValueError: negative: -2") == 1


def test_bad_pause_on_exceptions_state_is_a_protocol_error(tmp_path: Path, programs: list[Program]) -> None:
    script = _script(tmp_path, "pass\n")
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    reply = client.request("Debugger.setPauseOnExceptions", state="sometimes")
    assert reply["error"]["code"] == -32602
    client.handshake()
    assert program.wait() == 0


# -- the rest of the protocol ----------------------------------------------------------------------------

LONG_RUNNING = """\
import logging
import threading
import time

ticks = [0]
stop = threading.Event()


def background():
    while not stop.is_set():
        ticks[0] += 1
        time.sleep(0.01)


threading.Thread(target=background, daemon=True).start()
deadline = time.monotonic() + 120  # only bounds a hang: the tests set stop
rounds = 0  # bound before the messages the test waits for, so a pause right after them can read it
print("hello from print")
logging.warning("hello from logging")
while True:  # the body runs at least once, however early the test pauses the program and sets stop
    rounds += 1  # busy line
    time.sleep(0.01)
    if stop.is_set() or time.monotonic() > deadline:
        break
print("rounds", rounds > 0)
"""


def test_pause_while_running_other_threads_keep_running_console_and_objects(
    tmp_path: Path, programs: list[Program]
) -> None:
    script = _script(tmp_path, LONG_RUNNING)
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    client.handshake()
    printed = client.event("Console.messageAdded")["message"]
    assert printed["text"] == "hello from print" and printed["level"] == "log"
    assert printed["url"] == str(script) and printed["line"] == _line(script, "hello from print") + 1
    logged = client.event("Console.messageAdded")["message"]
    assert logged["text"] == "hello from logging" and logged["level"] == "warning"
    client.call("Debugger.pause")
    paused = client.paused()
    assert paused["reason"] == "other"
    assert _top(paused)["functionName"] == "<module>"
    rounds_at_pause = client.call("Runtime.evaluate", expression="rounds")["result"]["value"]
    # the main thread is paused, the background thread is not
    ticks = client.call("Runtime.evaluate", expression="ticks[0]")["result"]["value"]
    deadline = time.monotonic() + 60  # a loaded machine may starve the thread for a while, not for ever
    while client.call("Runtime.evaluate", expression="ticks[0]")["result"]["value"] == ticks:
        assert time.monotonic() < deadline, "the background thread stopped while the main thread is paused"
        time.sleep(0.05)
    assert client.call("Runtime.evaluate", expression="rounds")["result"]["value"] == rounds_at_pause
    # objects: expand, call a function on, release
    listed = client.call("Runtime.evaluate", expression="{'ticks': ticks, 'name': 'x'}", generatePreview=True)
    object_id = listed["result"]["objectId"]
    assert set(client.properties(object_id)) == {"ticks", "name"}
    called = client.call(
        "Runtime.callFunctionOn", objectId=object_id, functionDeclaration="lambda self: len(self)"
    )
    assert called["result"]["value"] == 2
    javascript = client.call(
        "Runtime.callFunctionOn", objectId=object_id, functionDeclaration="function() { return this.length; }"
    )
    assert javascript["wasThrown"] is True  # a client's JavaScript is an error, not a crash
    client.call("Runtime.releaseObject", objectId=object_id)
    gone = client.request("Runtime.getProperties", objectId=object_id)
    assert gone["error"]["message"] == "Could not find object with given id"
    # an unknown method is a protocol error and the session goes on
    unknown = client.request("Debugger.doesNotExist")
    assert unknown["error"] == {
        "code": -32601,
        "message": "'Debugger.doesNotExist' was not found",
        "data": [{"code": -32601, "message": "'Debugger.doesNotExist' was not found"}],
    }
    client.call("Runtime.evaluate", expression="stop.set()")
    client.call("Debugger.resume")
    assert program.wait() == 0
    assert "rounds True" in program.stdout
    assert "hello from logging" in program.stderr  # logging's own output is unchanged


def test_a_breakpoint_set_while_running_stops_a_loop_already_running(
    tmp_path: Path, programs: list[Program]
) -> None:
    script = _script(tmp_path, LONG_RUNNING)
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    client.handshake()
    client.event("Console.messageAdded")
    line = _line(script, "# busy line")
    client.call("Debugger.setBreakpointByUrl", url=str(script), lineNumber=line, columnNumber=0)
    paused = client.paused()
    assert paused["reason"] == "Breakpoint" and _top(paused)["location"]["lineNumber"] == line
    client.call(
        "Debugger.evaluateOnCallFrame", callFrameId=_top(paused)["callFrameId"], expression="stop.set()"
    )
    client.call("Debugger.disable")
    assert program.wait() == 0


def test_the_client_going_away_lets_the_program_go_on(tmp_path: Path, programs: list[Program]) -> None:
    script = _functions(tmp_path)
    program, client = _start(programs, script, "--inspect-brk=127.0.0.1:0")
    client.handshake()
    client.paused()
    client.close()
    assert program.wait() == 0
    assert program.stdout == "result 6 6 12\n"


def test_rt_inspect_script_is_rt_run_inspect(tmp_path: Path, programs: list[Program]) -> None:
    import sys

    script = _script(tmp_path, "import sys\nprint(sys.argv[1:])\n")
    program = Program(
        [sys.executable, "-m", "rt", "--inspect=127.0.0.1:0", "script.py", "--inspect"], tmp_path
    )
    programs.append(program)
    assert program.wait() == 0
    assert program.stdout == "['--inspect']\n"  # flags after the script are the script's
    assert "Listening:" in program.stderr
    assert script.exists()


def test_malformed_and_oversized_messages(tmp_path: Path, programs: list[Program]) -> None:
    from websockets.exceptions import ConnectionClosed

    script = _script(tmp_path, "print('ran')\n")
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    client.ws.send("{not json")
    reply = json.loads(client.ws.recv(timeout=10))
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    client.ws.send(json.dumps(["a list"]))
    assert json.loads(client.ws.recv(timeout=10))["error"]["code"] == -32600
    assert client.call("Runtime.evaluate", expression="1 + 1")["result"]["value"] == 2  # the session goes on
    exited = client.call("Runtime.evaluate", expression="exit(3)")  # SystemExit is a result too
    assert exited["wasThrown"] is True and exited["result"]["className"] == "SystemExit"
    client.ws.send("x" * (2 * 1024 * 1024))  # over the 1 MiB limit: the connection is closed, 1009
    with pytest.raises(ConnectionClosed) as closed:
        client.ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    # the program waits for a client still; a new one can attach
    client = Client(program.url())
    client.handshake()
    assert program.wait() == 0 and program.stdout == "ran\n"


def test_without_rt_http_the_inspector_says_what_to_install(tmp_path: Path) -> None:
    import subprocess
    import sys

    from inspector_client import rt_environ

    script = _script(tmp_path, "print('ran')\n")
    environ = rt_environ()
    environ["RT_DISABLE_PLUGINS"] += ",http"
    result = subprocess.run(
        [sys.executable, "-m", "rt", "run", "--inspect=127.0.0.1:0", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "rt run: the inspector needs the rt-http plugin, which is disabled (RT_DISABLE_PLUGINS or [plugins] disable)\n"
    )


def test_a_cdp_client_starts_the_program_with_run_if_waiting_for_debugger(
    tmp_path: Path, programs: list[Program]
) -> None:
    script = _script(tmp_path, "print('ran')\n")
    program, client = _start(programs, script, "--inspect-wait=127.0.0.1:0")
    for method in ("Runtime.enable", "Debugger.enable"):
        client.call(method)
    client.call("Runtime.runIfWaitingForDebugger")
    assert program.wait() == 0 and program.stdout == "ran\n"


def test_a_port_in_use_is_a_one_line_error(tmp_path: Path, programs: list[Program]) -> None:
    import socket

    script = _script(tmp_path, "print('ran')\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        program = rt_program(script, f"--inspect=127.0.0.1:{port}", cwd=tmp_path)
        programs.append(program)
        assert program.wait() == 2
    assert (
        program.stderr == f"rt run: the inspector cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )
    assert program.stdout == ""
