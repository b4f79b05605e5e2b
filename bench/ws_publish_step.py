"""The per-subscriber step of a fan-out, without I/O: ``server.publish`` of 32 bytes to 1,000 subscribers.

    uv run python -P bench/ws_publish_step.py [--before DIR] [--rounds 3]

The subscribers are ``ServerWebSocket`` objects with no stream (nothing is written, so this measures what
``Topics.publish`` costs per subscriber: the loop, the socket's queueing, the backpressure checks). Each
measurement is the best of 7 publishes of 2,000 messages, in CPU microseconds (process time, so other
processes on a loaded machine count less) per subscriber and message; the
queue is emptied between publishes. ``--before DIR`` runs the same measurement in a subprocess importing
rt_http from ``DIR`` (e.g. ``git archive main plugins/http/src | tar -x -C /tmp/x``, then
``--before /tmp/x/plugins/http/src``), alternating with this tree's, and prints the ratio for each round:
on a loaded machine compare rounds, not single numbers. Compression is off and on (``shared``, so one
compressed frame serves everyone).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

MEASURE = r"""
import json, sys, time
import rt
from rt.backend import run
from rt_http.websocket import ServerWebSocket, WebSocketHandler
from rt_http.deflate import DeflateConfig, negotiate

SUBSCRIBERS, MESSAGES = 1000, 2000


def measure(compress):
    server = rt.serve(fetch=lambda req, s: None, websocket={}, port=0)
    handler = WebSocketHandler(backpressure_limit=1 << 40)
    config = DeflateConfig.parse(True)
    session = negotiate(config, "permessage-deflate")[1] if compress else None
    sockets = [ServerWebSocket(server._hub, handler, None, "peer", session) for _ in range(SUBSCRIBERS)]
    for ws in sockets:
        ws._writing = True  # no stream: nothing may start a writer; the queue is emptied below instead
        ws.subscribe("room")
    message = "x" * 32
    best = float("inf")
    for _ in range(7):
        start = time.process_time()
        for _ in range(MESSAGES):
            server.publish("room", message, compress=compress)
        best = min(best, time.process_time() - start)
        for ws in sockets:
            ws._buffer.clear()
            ws._buffered = 0
    return best / (SUBSCRIBERS * MESSAGES) * 1e6


print(json.dumps({"plain": measure(False), "shared": measure(True)}))
"""


def run_measure(pythonpath: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", MEASURE], env=env, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", help="rt_http source directory of an older tree (plugins/http/src)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("us per subscriber and message (best of 7 publishes of 2,000 messages to 1,000 subscribers)")
    header = f"{'round':<6} {'plain':>8} {'shared':>8}"
    if args.before:
        header += f" {'before plain':>13} {'before shared':>14} {'plain/before':>13} {'shared/before':>14}"
    print(header)
    for number in range(1, args.rounds + 1):
        now = run_measure(None)
        line = f"{number:<6} {now['plain']:>8.3f} {now['shared']:>8.3f}"
        if args.before:
            then = run_measure(args.before)
            line += (
                f" {then['plain']:>13.3f} {then['shared']:>14.3f}"
                f" {now['plain'] / then['plain']:>12.2f}x {now['shared'] / then['shared']:>13.2f}x"
            )
        print(line, flush=True)
    if args.before:
        print("(time ratios: under 1.00x this tree is faster)")


if __name__ == "__main__":
    main()
