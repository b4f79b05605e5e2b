"""An echo server on ``rt.serve`` for the Autobahn|Testsuite fuzzing client (run by ``run.py``).

    python tools/autobahn/echo_server.py --backend asyncio|trio [--deflate] [--port 0]

Prints ``PORT <n>`` once listening, then serves until killed. Every message is sent back as it came (text as
text, binary as binary), compressed when the client negotiated permessage-deflate and ``--deflate`` is on.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import rt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument(
        "--deflate", action="store_true", help="offer permessage-deflate (Autobahn 12.*, 13.*)"
    )
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    compress = bool(args.deflate)

    def fetch(request: rt.Request, server: Any) -> rt.Response | None:
        return None if server.upgrade(request) else rt.Response("WebSocket only", status=400)

    def message(ws: Any, data: str | bytes) -> None:
        ws.send(data, compress)

    handler = rt.WebSocketHandler(
        message=message,
        per_message_deflate={"compress": "dedicated", "decompress": "dedicated"} if compress else False,
        max_payload_length=64 * 1024 * 1024,  # 9.* sends messages of up to 16 MiB
        backpressure_limit=256 * 1024 * 1024,
        idle_timeout=0,
    )

    async def serve() -> None:
        async with rt.serve(fetch=fetch, websocket=handler, port=args.port) as server:
            print(f"PORT {server.port}", flush=True)
            await server.serve_forever()

    from rt.backend import run

    run(serve, backend=args.backend)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
