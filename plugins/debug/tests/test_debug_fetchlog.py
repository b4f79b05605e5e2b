"""Verbose fetch logging: RT_CONFIG_VERBOSE_FETCH=curl|true|false over real requests to a local server."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import httpx
import pytest
import requests

from rt.events import HttpRequest, HttpResponse
from rt.hookspecs import hookimpl
from rt.kernel import Kernel, use_kernel
from rt_debug import fetchlog, instrument


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers every request with a small JSON echo and a cookie (to check masking on responses)."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        payload = json.dumps({"method": self.command, "path": self.path, "received": len(body)}).encode()
        self.send_response(201 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", "session=server-secret")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def verbose(rt_make_kernel: Callable[..., Kernel]) -> Iterator[Callable[..., Kernel]]:
    """Make a kernel with the given environment current; put the clients back untouched afterwards."""
    stack: list[Any] = []

    def make(*, current: bool = True, **environ: str) -> Kernel:
        """``current=False`` for async tests: a context variable set here could not be reset in teardown."""
        kernel = rt_make_kernel(environ=environ)
        if not current:
            return kernel
        context = use_kernel(kernel)
        context.__enter__()
        stack.append(context)
        return kernel

    yield make
    for context in reversed(stack):
        context.__exit__(None, None, None)
    instrument.uninstall()


def _fetch_lines(err: str) -> list[str]:
    lines = err.splitlines()
    assert all(line.startswith("[fetch] ") for line in lines), lines
    return lines


# -- pure formatting ---------------------------------------------------------------------------------------

REQUEST = HttpRequest(
    method="post",
    url="http://user:pw@127.0.0.1:8080/items?q=1",
    headers=(("Content-Type", "application/json"), ("Authorization", "Bearer tok"), ("Cookie", "a=b")),
    body=b'{"name": "$HOME \\"x\\""}',
    client="test",
)


def test_curl_line_layout_quotes_and_masks() -> None:
    assert fetchlog.curl_line(REQUEST) == (
        'curl --http1.1 "http://user:[REDACTED]@127.0.0.1:8080/items?q=1" -X POST '
        '-H "Content-Type: application/json" -H "Authorization: [REDACTED]" -H "Cookie: [REDACTED]" '
        '--data-raw "{\\"name\\": \\"\\$HOME \\\\\\"x\\\\\\"\\"}"'
    )
    shown = fetchlog.curl_line(REQUEST, show_secrets=True)
    assert '"Authorization: Bearer tok"' in shown and "user:pw@" in shown


def test_body_is_shown_only_when_text_and_at_most_4_kib_of_it() -> None:
    assert fetchlog.printable_body(b"hello") == "hello"
    assert fetchlog.printable_body(b"\x89PNG\x00\x01") is None
    assert fetchlog.printable_body(b"\xff\xfe") is None
    assert fetchlog.printable_body(b"x" * (fetchlog.MAX_BODY_BYTES + 1)) == "x" * fetchlog.MAX_BODY_BYTES
    assert fetchlog.printable_body(None) is None
    multi = attrs.evolve(REQUEST, body=b"line1\nline2", headers=())
    assert fetchlog.curl_line(multi).endswith("--data-raw $'line1\\nline2'")  # still one line
    binary = attrs.evolve(REQUEST, body=b"\x00\x01", headers=())
    assert "--data-raw" not in fetchlog.curl_line(binary)


def test_preview_copies_only_the_head_and_keeps_the_length() -> None:
    limit = fetchlog.MAX_BODY_BYTES
    small = b"small body"
    assert fetchlog.preview(small) is small  # bytes are immutable: kept, not copied
    assert fetchlog.preview(bytearray(small)) == small and fetchlog.preview("\u00e9") == "\u00e9".encode()
    assert fetchlog.preview(iter([b"streamed"])) is None and fetchlog.preview(None) is None
    for body in (
        b"a" * (3 * limit),
        bytearray(b"a" * (3 * limit)),
        memoryview(b"a" * (3 * limit)),
        "a" * (3 * limit),
    ):
        kept = fetchlog.preview(body)
        assert isinstance(kept, fetchlog.BodyPreview), type(body)
        assert bytes(kept) == b"a" * limit and kept.total == 3 * limit
    # a long non-ASCII text: the length is that of its UTF-8 encoding, the head is cut at 4 KiB of bytes
    text = "\u00e9" * limit
    kept = fetchlog.preview(text)
    assert isinstance(kept, fetchlog.BodyPreview) and kept.total == 2 * limit and len(kept) == limit
    # a character cut in two at the limit is left out of the log, not taken for binary data
    odd = fetchlog.BodyPreview(("x" + "\u00e9" * limit).encode()[:limit], 2 * limit + 1)
    assert fetchlog.shown_body(odd) == ("x" + "\u00e9" * ((limit - 2) // 2), 2 * limit + 1)


def test_a_long_body_shows_4_kib_and_its_length() -> None:
    limit = fetchlog.MAX_BODY_BYTES
    whole = attrs.evolve(REQUEST, headers=(), body=b"a" * limit + b"b" * limit)
    line = fetchlog.curl_line(whole)  # a client that emits its events with the whole body
    assert line.endswith(f'--data-raw "{"a" * limit}" ({2 * limit} bytes total)')
    kept = attrs.evolve(whole, body=fetchlog.preview(whole.body))  # what the wrappers emit
    assert fetchlog.curl_line(kept) == line
    exact = attrs.evolve(whole, body=b"a" * limit)
    assert fetchlog.curl_line(exact).endswith(f'--data-raw "{"a" * limit}"')  # not cut: no total


def test_modes() -> None:
    response = HttpResponse(request=REQUEST, status=404, reason="Not Found", headers=(("Set-Cookie", "s=1"),))
    assert fetchlog.request_lines(REQUEST, "false") == []
    assert fetchlog.response_lines(response, "false") == []
    true_lines = fetchlog.request_lines(REQUEST, "true")
    assert true_lines[0] == "[fetch] > HTTP/1.1 POST http://user:[REDACTED]@127.0.0.1:8080/items?q=1"
    assert true_lines[1:] == [
        "[fetch] > Content-Type: application/json",
        "[fetch] > Authorization: [REDACTED]",
        "[fetch] > Cookie: [REDACTED]",
    ]
    curl_lines = fetchlog.request_lines(REQUEST, "curl")
    assert curl_lines[0].startswith("[fetch] $ curl --http1.1 ")
    assert curl_lines[1:] == true_lines
    assert fetchlog.response_lines(response, "true") == [
        "[fetch] < 404 Not Found",
        "[fetch] < Set-Cookie: [REDACTED]",
    ]


@pytest.mark.parametrize(
    "name", ["X-Auth-Token", "X-CSRF-Token", "X-Client-Secret", "Api-Key", "X-Session-Id"]
)
def test_credential_like_custom_headers_are_masked(name: str) -> None:
    request = HttpRequest(
        method="GET",
        url="http://127.0.0.1:8080/",
        http_version="HTTP/1.1",
        headers=((name, "canary-credential"), ("Accept", "text/plain")),
    )
    text = "\n".join(fetchlog.request_lines(request, "curl"))
    assert "canary-credential" not in text and f"{name}: [REDACTED]" in text
    assert "Accept: text/plain" in text  # ordinary headers stay readable
    assert "canary-credential" in "\n".join(fetchlog.request_lines(request, "true", show_secrets=True))


# -- the hooks: any client that emits them is logged -------------------------------------------------------


def test_events_emitted_through_the_kernel_hooks_are_logged(
    verbose: Callable[..., Kernel], capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = verbose(RT_CONFIG_VERBOSE_FETCH="true")
    request = HttpRequest(
        method="GET", url="http://127.0.0.1:1/x", headers=(("Accept", "*/*"),), client="rt.fetch"
    )
    kernel.host.http_request(request)
    kernel.host.http_response(
        HttpResponse(request=request, status=200, reason="OK", headers=(("Server", "t"),))
    )
    assert _fetch_lines(capsys.readouterr().err) == [
        "[fetch] > HTTP/1.1 GET http://127.0.0.1:1/x",
        "[fetch] > Accept: */*",
        "[fetch] < 200 OK",
        "[fetch] < Server: t",
    ]


def test_nothing_is_logged_or_wrapped_when_off(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    instrument.uninstall()  # whatever an earlier kernel of this process (RT_* in the shell) installed
    original = http.client.HTTPConnection.putrequest
    kernel = verbose()  # default: false
    assert kernel.config.get("debug.verbose_fetch") == "false"
    assert http.client.HTTPConnection.putrequest is original
    assert not instrument.is_installed()
    request = HttpRequest(method="GET", url="http://127.0.0.1:1/", headers=())
    kernel.host.http_request(request)
    with urllib.request.urlopen(f"{server_url}/quiet") as response:
        assert response.status == 200
    assert capsys.readouterr().err == ""
    verbose(RT_CONFIG_VERBOSE_FETCH="false")
    assert not instrument.is_installed()


def test_config_file_key_turns_it_on(
    rt_make_kernel: Callable[..., Kernel], capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = rt_make_kernel('[debug]\nverbose_fetch = "true"\n')
    try:
        with use_kernel(kernel):
            assert instrument.is_installed()
            kernel.host.http_request(HttpRequest(method="GET", url="http://h/", headers=()))
    finally:
        instrument.uninstall()
    assert capsys.readouterr().err == "[fetch] > HTTP/1.1 GET http://h/\n"


def test_bad_mode_is_refused_with_the_choices(rt_make_kernel: Callable[..., Kernel]) -> None:
    with pytest.raises(Exception, match="'loud' is not one of '1', 'true', 'curl', '0', 'false'"):
        rt_make_kernel(environ={"RT_CONFIG_VERBOSE_FETCH": "loud"})


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        ("1", "true"),
        ("true", "true"),
        ("TRUE", "true"),
        ("True", "true"),
        ("curl", "curl"),
        ("CURL", "curl"),
        ("0", "false"),
        ("false", "false"),
        ("FALSE", "false"),
        (" 1 ", "true"),
    ],
)
def test_the_reference_values_are_accepted_in_any_case(
    verbose: Callable[..., Kernel], capsys: pytest.CaptureFixture[str], value: str, mode: str
) -> None:
    """RT_CONFIG_VERBOSE_FETCH=1 made every use of rt. fail with a ConfigError; the reference accepts it."""
    instrument.uninstall()
    kernel = verbose(RT_CONFIG_VERBOSE_FETCH=value)  # no ConfigError
    import rt

    with use_kernel(kernel):
        assert "1" in rt.inspect([1])  # an rt. name (rt-debug's own) works with it set
    assert instrument.is_installed() is (mode != "false")
    kernel.host.http_request(HttpRequest(method="GET", url="http://h/", headers=()))
    err = capsys.readouterr().err
    assert ("[fetch] > HTTP/1.1 GET http://h/" in err) is (mode != "false")
    assert ("$ curl" in err) is (mode == "curl")


def test_a_broken_observer_input_never_breaks_the_client(
    verbose: Callable[..., Kernel], capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = verbose(RT_CONFIG_VERBOSE_FETCH="curl")
    kernel.host.http_request(object())  # not an HttpRequest: logging fails quietly
    assert capsys.readouterr().err == ""


# -- real clients against a real local server --------------------------------------------------------------


def test_urllib_request_is_logged_in_curl_mode(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    verbose(RT_CONFIG_VERBOSE_FETCH="curl")
    request = urllib.request.Request(
        f"{server_url}/items",
        data=b'{"a": 1}',
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": "Bearer very-secret"},
    )
    with urllib.request.urlopen(request) as response:
        assert json.load(response) == {"method": "POST", "path": "/items", "received": 8}
    lines = _fetch_lines(capsys.readouterr().err)
    assert lines[0].startswith(f'[fetch] $ curl --http1.1 "{server_url}/items" -X POST -H ')
    assert lines[0].endswith('--data-raw "{\\"a\\": 1}"')
    assert '-H "Authorization: [REDACTED]"' in lines[0]
    assert lines[1] == f"[fetch] > HTTP/1.1 POST {server_url}/items"
    assert "[fetch] > Content-Type: application/json" in lines
    assert "[fetch] > Authorization: [REDACTED]" in lines
    assert "[fetch] < 201 Created" in lines
    assert "[fetch] < Set-Cookie: [REDACTED]" in lines
    assert "very-secret" not in "\n".join(lines) and "server-secret" not in "\n".join(lines)
    assert lines.index(f"[fetch] > HTTP/1.1 POST {server_url}/items") < lines.index("[fetch] < 201 Created")


def test_secrets_are_shown_only_when_asked(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    verbose(RT_CONFIG_VERBOSE_FETCH="true", RT_CONFIG_VERBOSE_FETCH_SECRETS="1")
    request = urllib.request.Request(f"{server_url}/me", headers={"Authorization": "Bearer very-secret"})
    urllib.request.urlopen(request).close()
    lines = _fetch_lines(capsys.readouterr().err)
    assert "[fetch] > Authorization: Bearer very-secret" in lines
    assert "[fetch] < Set-Cookie: session=server-secret" in lines
    assert not any("$ curl" in line for line in lines)  # `true` mode has no curl line


def test_requests_is_logged_with_its_body(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    verbose(RT_CONFIG_VERBOSE_FETCH="curl")
    response = requests.put(
        f"{server_url}/doc", data="plain text body", cookies={"sid": "cookie-secret"}, timeout=10
    )
    assert response.status_code == 200
    lines = _fetch_lines(capsys.readouterr().err)
    assert lines[0].startswith(f'[fetch] $ curl --http1.1 "{server_url}/doc" -X PUT ')
    assert lines[0].endswith('--data-raw "plain text body"')
    assert "[fetch] > Cookie: [REDACTED]" in lines
    assert "cookie-secret" not in "\n".join(lines)
    assert "[fetch] < 200 OK" in lines


def test_httpx_sync_client_is_logged(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    verbose(RT_CONFIG_VERBOSE_FETCH="true")
    with httpx.Client() as client:
        response = client.post(f"{server_url}/x", json={"k": "v"}, headers={"Authorization": "Basic abc"})
    assert response.status_code == 201
    lines = _fetch_lines(capsys.readouterr().err)
    assert lines[0] == f"[fetch] > HTTP/1.1 POST {server_url}/x"
    assert "[fetch] > authorization: [REDACTED]" in lines
    assert "[fetch] < 201 Created" in lines
    assert "[fetch] < content-type: application/json" in [line.lower() for line in lines]


@pytest.mark.anyio
async def test_httpx_async_client_is_logged(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with use_kernel(verbose(current=False, RT_CONFIG_VERBOSE_FETCH="curl")):
        async with httpx.AsyncClient() as client:
            response = await client.get(f"{server_url}/async")
    assert response.status_code == 200
    lines = _fetch_lines(capsys.readouterr().err)
    assert lines[0].startswith(f'[fetch] $ curl --http1.1 "{server_url}/async" -X GET -H ')
    assert lines[1] == f"[fetch] > HTTP/1.1 GET {server_url}/async"
    assert "[fetch] < 200 OK" in lines


def test_a_third_party_observer_sees_the_same_events(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = verbose(RT_CONFIG_VERBOSE_FETCH="true")
    seen: list[Any] = []

    class Observer:
        @hookimpl
        def rt_http_response(self, response: HttpResponse) -> None:
            seen.append(response)

    kernel.register(Observer(), "observer")
    with httpx.Client() as client:
        client.get(f"{server_url}/seen")
    assert len(seen) == 1
    assert seen[0].status == 200 and seen[0].request.client == "httpx"
    assert seen[0].request.url == f"{server_url}/seen"
    capsys.readouterr()


# -- large bodies: the log shows 4 KiB and the length, the event keeps no more, the request sends it all ------

LARGE = 1 << 20


class _RequestObserver:
    def __init__(self) -> None:
        self.requests: list[HttpRequest] = []

    @hookimpl
    def rt_http_request(self, request: HttpRequest) -> None:
        self.requests.append(request)


def _check_large_body_log(err: str, url: str, observer: _RequestObserver) -> None:
    limit = fetchlog.MAX_BODY_BYTES
    curl = [line for line in _fetch_lines(err) if line.startswith("[fetch] $ curl")]
    assert len(curl) == 1 and curl[0].startswith(f'[fetch] $ curl --http1.1 "{url}" -X POST ')
    assert curl[0].endswith(f'--data-raw "{"a" * limit}" ({LARGE} bytes total)'), curl[0][-200:]
    [event] = observer.requests
    assert isinstance(event.body, fetchlog.BodyPreview)
    assert len(event.body) == limit and event.body.total == LARGE  # only what is shown was kept


def _large_body() -> bytearray:
    return bytearray(b"a" * LARGE)  # mutable: before the fix it was copied whole into the event


@pytest.mark.parametrize("client", ["urllib", "requests", "httpx"])
def test_a_large_body_is_logged_as_4_kib_and_its_length_and_sent_whole(
    client: str, verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = verbose(RT_CONFIG_VERBOSE_FETCH="curl")
    observer = _RequestObserver()
    kernel.register(observer, "request-observer")
    url = f"{server_url}/upload"
    if client == "urllib":
        with urllib.request.urlopen(
            urllib.request.Request(url, data=_large_body(), method="POST")
        ) as response:
            answer = json.load(response)
    elif client == "requests":
        answer = requests.post(url, data=_large_body(), timeout=30).json()
    else:
        with httpx.Client() as http_client:
            answer = http_client.post(url, content=bytes(_large_body())).json()
    assert answer == {"method": "POST", "path": "/upload", "received": LARGE}  # the whole body was sent
    _check_large_body_log(capsys.readouterr().err, url, observer)


@pytest.mark.anyio
async def test_a_large_body_of_the_async_httpx_client_is_logged_as_4_kib_and_sent_whole(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = verbose(current=False, RT_CONFIG_VERBOSE_FETCH="curl")
    observer = _RequestObserver()
    kernel.register(observer, "request-observer")
    url = f"{server_url}/upload"
    with use_kernel(kernel):
        async with httpx.AsyncClient() as client:
            response = await client.post(url, content=bytes(_large_body()))
    assert response.json() == {"method": "POST", "path": "/upload", "received": LARGE}
    _check_large_body_log(capsys.readouterr().err, url, observer)


# -- masking: URL credentials and credential-like header names ---------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "X-Auth",
        "X-Access-Key",
        "Ocp-Apim-Subscription-Key",
        "X-Signature",
        "X-Hub-Signature-256",
        "Private-Token",
        "X-Amz-Security-Token",
        "Proxy-Authorization",
        "X-XSRF-TOKEN",
        "X-Passphrase",
        "Set-Cookie",
        "x-api-key",
    ],
)
def test_every_header_named_like_a_credential_is_masked(name: str) -> None:
    request = HttpRequest(method="GET", url="http://127.0.0.1:8080/", headers=((name, "canary-credential"),))
    text = "\n".join(fetchlog.request_lines(request, "curl"))
    assert "canary-credential" not in text and f"{name}: [REDACTED]" in text


def test_a_configured_list_masks_more_header_names(
    verbose: Callable[..., Kernel], capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = verbose(
        RT_CONFIG_VERBOSE_FETCH="curl", RT_CONFIG_VERBOSE_FETCH_MASK_HEADERS="X-Tenant, X-Customer-Ref"
    )
    request = HttpRequest(
        method="GET",
        url="http://h/",
        headers=(("x-tenant", "canary-1"), ("X-Customer-Ref", "canary-2"), ("Accept", "text/plain")),
    )
    kernel.host.http_request(request)
    kernel.host.http_response(
        HttpResponse(request=request, status=200, reason="OK", headers=(("X-Tenant", "canary-3"),))
    )
    err = capsys.readouterr().err
    assert "canary" not in err and "X-Tenant: [REDACTED]" in err and "Accept: text/plain" in err


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw-canary@127.0.0.1:8080/x?q=1", "http://user:[REDACTED]@127.0.0.1:8080/x?q=1"),
        ("https://ghp_canary@github.com/o/r.git", "https://[REDACTED]@github.com/o/r.git"),
        (
            "http://[user:pw-canary@127.0.0.1]:8080/x",
            "http://user:[REDACTED]@127.0.0.1:8080/x",
        ),  # http.client's
        ("http://u:p@canary@h/", "http://u:[REDACTED]@h/"),
        (
            "http://h/cb?code=1&access_token=canary&api_key=canary#frag",
            "http://h/cb?code=1&access_token=[REDACTED]&api_key=[REDACTED]#frag",
        ),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ],
)
def test_url_credentials_are_masked_whatever_the_shape(url: str, shown: str) -> None:
    request = HttpRequest(method="GET", url=url, headers=())
    assert fetchlog.request_lines(request, "true") == [f"[fetch] > HTTP/1.1 GET {shown}"]
    assert "canary" not in fetchlog.curl_line(request)


def test_urllib_with_credentials_in_the_url_masks_them_in_the_url_and_the_host_line(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """urllib sends user:password@host in the Host header (and http.client brackets it in the URL)."""
    verbose(RT_CONFIG_VERBOSE_FETCH="curl")
    port = server_url.rsplit(":", 1)[1]
    with pytest.raises(OSError):  # urllib takes "user:pw-canary@127.0.0.1" for a host name
        urllib.request.urlopen(f"http://user:pw-canary@127.0.0.1:{port}/x", timeout=10)
    lines = _fetch_lines(capsys.readouterr().err)
    assert "pw-canary" not in "\n".join(lines)
    assert f"[fetch] > HTTP/1.1 GET http://user:[REDACTED]@127.0.0.1:{port}/x" in lines
    assert f"[fetch] > Host: 127.0.0.1:{port}" in lines


def test_http_client_requests_and_httpx_mask_url_credentials_and_credential_headers(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    verbose(RT_CONFIG_VERBOSE_FETCH="curl")
    host, port = server_url.removeprefix("http://").rsplit(":", 1)
    credentials = {
        "X-Auth": "canary-a",
        "X-Access-Key": "canary-b",
        "Ocp-Apim-Subscription-Key": "canary-c",
        "X-Signature": "canary-d",
    }
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/hc?token=canary-e", headers=credentials)
    connection.getresponse().read()
    connection.close()
    assert requests.get(f"http://user:canary-f@{host}:{port}/rq", headers=credentials, timeout=10).ok
    with httpx.Client() as client:
        assert client.get(f"http://user:canary-g@{host}:{port}/hx", headers=credentials).is_success
    lines = _fetch_lines(capsys.readouterr().err)
    text = "\n".join(lines)
    assert "canary" not in text
    for path in ("/hc", "/rq", "/hx"):
        assert any(line.startswith("[fetch] > HTTP/1.1 GET ") and path in line for line in lines), path
    assert text.lower().count("x-signature: [redacted]") == 6  # three clients, curl line and header line


@pytest.mark.anyio
async def test_rt_fetch_masks_url_credentials_and_credential_headers(
    verbose: Callable[..., Kernel], server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import rt

    host = server_url.removeprefix("http://")
    with use_kernel(verbose(current=False, RT_CONFIG_VERBOSE_FETCH="CURL")):
        response = await rt.fetch(
            f"http://user:canary-url@{host}/rf?api_key=canary-query",
            headers={
                "X-Access-Key": "canary-h1",
                "Ocp-Apim-Subscription-Key": "canary-h2",
                "X-Auth": "canary-h3",
            },
        )
        assert response.status == 200
    lines = _fetch_lines(capsys.readouterr().err)
    text = "\n".join(lines)
    assert "canary" not in text
    assert any(line.startswith("[fetch] $ curl") and "/rf?api_key=[REDACTED]" in line for line in lines)
    assert "[fetch] < 200 OK" in lines
