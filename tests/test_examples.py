"""The README's example runs: `rt examples/chat.py` serves its page, and two real WebSocket clients chat."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from rt.testing import clean_environ

ROOT = Path(__file__).resolve().parents[1]  # tests/ runs where every plugin is installed (uv run pytest, tox all)


@pytest.fixture(params=["asyncio", "trio"])
def chat_url(request: pytest.FixtureRequest) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "rt", "examples/chat.py"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=clean_environ({"PORT": "0", "RT_BACKEND": request.param}),
    )
    with process:  # closes the pipes when done
        try:
            line = process.stdout.readline()  # "rt chat on http://127.0.0.1:PORT/ (Ctrl-C to stop)"
            assert line.startswith("rt chat on http://"), line + process.stderr.read()
            yield line.split()[3]
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_serves_the_page(chat_url):
    with urllib.request.urlopen(chat_url, timeout=10) as response:
        assert response.status == 200
        assert response.headers["content-type"].startswith("text/html")
        assert "<title>rt chat</title>" in response.read().decode()
    with urllib.request.urlopen(chat_url + "health", timeout=10) as response:
        assert response.read() == b"ok"


def test_two_visitors_chat(chat_url):
    from websockets.sync.client import connect

    ws_url = chat_url.replace("http://", "ws://") + "ws"
    with connect(ws_url + "?name=ann", open_timeout=10) as ann:
        assert ann.recv(timeout=10) == "* welcome, ann (1 here)"
        with connect(ws_url + "?name=<bob>", open_timeout=10) as bob:
            assert bob.recv(timeout=10) == "* welcome, &lt;bob&gt; (2 here)"
            assert ann.recv(timeout=10) == "* &lt;bob&gt; joined"
            bob.send("hello ann")
            assert ann.recv(timeout=10) == "&lt;bob&gt;: hello ann"
            assert bob.recv(timeout=10) == "&lt;bob&gt;: hello ann"
        assert ann.recv(timeout=10) == "* &lt;bob&gt; left"
