"""`rt secrets set|get|delete`: the value from stdin or a hidden prompt, never argv; `get` prints only it."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import uuid

import pytest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux Secret Service only")


def rt_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    return subprocess.run(
        [sys.executable, "-m", "rt", "secrets", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=environ,
        check=False,
    )


@pytest.fixture
def service(secret_service) -> str:
    return f"rt-cli-{uuid.uuid4().hex[:12]}"


@linux_only
def test_set_get_delete_through_the_os_store(service) -> None:
    value = 'tok with spaces, "quotes" and é🔑'
    stored = rt_cli("set", "--service", service, "--name", "alice", stdin=value.encode() + b"\n")
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout == b""
    looked_up = subprocess.run(
        ["secret-tool", "lookup", "service", service, "username", "alice"],
        capture_output=True,
        timeout=20,
        check=False,
    )
    assert looked_up.stdout.decode() == value  # the trailing newline of the pipe is not part of it
    got = rt_cli("get", "-s", service, "-n", "alice")
    assert got.returncode == 0
    assert got.stdout.decode() == value  # the value and nothing else
    assert rt_cli("delete", "-s", service, "-n", "alice").returncode == 0
    missing = rt_cli("get", "-s", service, "-n", "alice")
    assert missing.returncode == 1 and missing.stdout == b""
    assert b"No secret found" in missing.stderr
    assert rt_cli("delete", "-s", service, "-n", "alice").returncode == 1


@linux_only
def test_multiline_value_keeps_inner_newlines(service) -> None:
    assert rt_cli("set", "-s", service, "-n", "pem", stdin=b"line1\nline2\n\n").returncode == 0
    assert rt_cli("get", "-s", service, "-n", "pem").stdout == b"line1\nline2\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["get", "-n", "alice"], b"Missing required --service"),
        (["set", "-s", "svc"], b"Missing required --name"),
        (["delete"], b"Missing required --service"),
        ([], b"Missing action"),
    ],
)
def test_missing_flags_exit_1(args: list[str], message: bytes) -> None:
    result = rt_cli(*args, stdin=b"x")
    assert result.returncode == 1
    assert message in result.stderr


def test_value_is_never_taken_from_argv() -> None:
    result = rt_cli("set", "-s", "svc", "-n", "alice", "--value", "argv-secret")
    assert result.returncode == 1
    assert b"never taken from the command line" in result.stderr
    assert b"argv-secret" not in result.stderr


def test_empty_stdin_is_refused(rt_make_kernel) -> None:
    result = rt_cli("set", "-s", "svc", "-n", "alice", stdin=b"")
    assert result.returncode == 1 and b"Empty value" in result.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_a_hidden_prompt(rt_make_kernel, monkeypatch) -> None:
    """On a TTY the value comes from getpass (no echo); the prompt names the pair, not the value."""
    import rt
    from rt_secrets import cli

    prompts: list[str] = []
    monkeypatch.setattr(cli.getpass, "getpass", lambda prompt: prompts.append(prompt) or "typed-secret")
    kernel = rt_make_kernel(environ={"RT_SECRETS_BACKEND": "memory"})
    stdout, stderr = io.StringIO(), io.StringIO()
    with rt.use_kernel(kernel):
        args = argparse.Namespace(action="set", service="svc", name="alice")
        assert cli.run(args, kernel, stdin=_Terminal(), stdout=stdout, stderr=stderr) == 0
        args = argparse.Namespace(action="get", service="svc", name="alice")
        assert cli.run(args, kernel, stdin=_Terminal(), stdout=stdout, stderr=stderr) == 0
    assert prompts == ["Secret for alice on svc: "]
    assert stdout.getvalue() == "typed-secret"
    assert stderr.getvalue() == ""


def test_stdin_is_bounded(rt_make_kernel) -> None:
    from rt_secrets import cli

    result = rt_cli("set", "-s", "svc", "-n", "alice", stdin=b"x" * (cli.MAX_STDIN_CHARS + 10))
    assert result.returncode == 1 and b"longer than" in result.stderr
