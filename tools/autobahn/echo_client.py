"""rt.WebSocket as the echo client of the Autobahn|Testsuite fuzzing server (run by ``client_run.py``).

    python tools/autobahn/echo_client.py --url ws://127.0.0.1:PORT --agent NAME --backend asyncio|uvloop|trio [--deflate]

Asks the fuzzing server how many cases it has, connects once per case and sends back every message it gets
(text as text, binary as binary), then asks the server to write its report for ``--agent``.

The echo is a ``message`` listener, which the reader awaits before it handles what came after the message:
when a valid message and a protocol violation arrive in one read (case 5.15), the echo goes out before the
close frame, which is the order the suite calls strict. (``async for`` would see the message only after the
reader had already failed the connection, which the suite accepts as NON-STRICT.)
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import anyio

import rt
from rt_http.client import MessageEvent, WebSocketError


async def echo(event: MessageEvent) -> None:
    with contextlib.suppress(WebSocketError):  # the case may have failed the connection meanwhile
        await event.target.send(event.data)


async def run(url: str, agent: str, deflate: bool) -> None:
    async with rt.WebSocket(f"{url}/getCaseCount") as ws:
        count = int(await ws.receive())
    for case in range(1, count + 1):
        try:
            ws = rt.WebSocket(
                f"{url}/runCase?case={case}&agent={agent}",
                per_message_deflate=deflate,
                max_payload_length=64 * 1024 * 1024,  # 9.* sends messages of up to 16 MiB
                timeout=60_000,
            )
            ws.add_event_listener("message", echo)
            async with ws:
                await ws.wait_closed()
        except WebSocketError:
            pass  # the case failed the connection on purpose; the report says whether rt did it right
        if case % 50 == 0:
            print(f"{agent}: {case}/{count}", file=sys.stderr, flush=True)
    async with rt.WebSocket(f"{url}/updateReports?agent={agent}") as ws:
        await ws.wait_closed()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--backend", choices=("asyncio", "uvloop", "trio"), default="asyncio")
    parser.add_argument("--deflate", action="store_true", help="offer permessage-deflate (12.*, 13.*)")
    args = parser.parse_args()
    if args.backend == "trio":
        anyio.run(run, args.url, args.agent, args.deflate, backend="trio")
    else:
        options = {"use_uvloop": args.backend == "uvloop"}
        anyio.run(run, args.url, args.agent, args.deflate, backend="asyncio", backend_options=options)


if __name__ == "__main__":
    main()
