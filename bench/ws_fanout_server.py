"""The server of bench/ws.py's fan-out rows: the chat shape (every message republished to topic "room")
served by N worker processes sharing one port, with pub/sub across them through a Redis broker.

    python bench/ws_fanout_server.py WORKERS BROKER BACKEND     BROKER: a redis:// URL, or "none"

Prints ``READY <port>`` once every worker listens (workers print their own READY lines too, same port),
then serves until SIGTERM, which stops the workers as well.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/secrets.py (a benchmark) would shadow the standard library's secrets module, which rt-redis uses
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import rt  # noqa: E402 - after the sys.path guard above


def main() -> None:
    workers, broker, backend = int(sys.argv[1]), sys.argv[2], sys.argv[3]

    def fetch(req: rt.Request, server: rt.Server) -> rt.Response | None:
        return None if server.upgrade(req) else rt.Response("websocket only", status=400)

    server = rt.serve(
        fetch=fetch,
        websocket={
            "idle_timeout": 0,
            "send_pings": False,
            "open": lambda ws: ws.subscribe("room"),
            "message": lambda ws, msg: server.publish("room", msg),
        },
        hostname="127.0.0.1",
        port=0,
        backlog=4096,
        workers=workers,
        broker=None if broker == "none" else broker,
    )

    async def serve() -> None:
        async with server:
            print(f"READY {server.port}", flush=True)
            await server.serve_forever()

    rt.run(serve, backend=backend)


if __name__ == "__main__":
    main()
