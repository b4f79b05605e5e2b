"""Misuse raises TypeError/ValueError with the reference runtime's messages; bad tokens never raise."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest

SECRET = "misuse-secret"
ENCODING_MESSAGE = "^Invalid format: must be 'base64', 'base64url', or 'hex'$"


def test_empty_secret(csrf: Any) -> None:
    with pytest.raises(ValueError, match="^Secret must be a non-empty string$"):
        csrf.generate("")
    with pytest.raises(ValueError, match="^Secret must be a non-empty string$"):
        csrf.verify("token", secret="")


@pytest.mark.parametrize("secret", [b"bytes", 42, ["s"]])
def test_non_string_secret(csrf: Any, secret: Any) -> None:
    with pytest.raises(TypeError, match="^Secret must be a non-empty string$"):
        csrf.generate(secret)
    with pytest.raises(TypeError, match="^Secret must be a non-empty string$"):
        csrf.verify("token", secret=secret)


def test_empty_or_missing_token(csrf: Any) -> None:
    with pytest.raises(ValueError, match="^Token must be a non-empty string$"):
        csrf.verify("", secret=SECRET)
    for token in (None, b"token", 3):
        with pytest.raises(TypeError, match="^Token must be a non-empty string$"):
            csrf.verify(token, secret=SECRET)


@pytest.mark.parametrize("encoding", ["base32", "BASE64", "utf-8", ""])
def test_bad_encoding(csrf: Any, encoding: str) -> None:
    with pytest.raises(ValueError, match=ENCODING_MESSAGE):
        csrf.generate(SECRET, encoding=encoding)
    with pytest.raises(ValueError, match=ENCODING_MESSAGE):
        csrf.verify("token", secret=SECRET, encoding=encoding)


def test_non_string_encoding(csrf: Any) -> None:
    with pytest.raises(TypeError, match=ENCODING_MESSAGE):
        csrf.generate(SECRET, encoding=None)
    with pytest.raises(TypeError, match=ENCODING_MESSAGE):
        csrf.verify("token", secret=SECRET, encoding=["hex"])  # unhashable too


@pytest.mark.parametrize("value", [-1, -0.5, timedelta(milliseconds=-1), math.nan, math.inf, 2**64])
def test_out_of_range_durations(csrf: Any, value: Any) -> None:
    with pytest.raises(ValueError, match='^The value of "expires_in" is out of range'):
        csrf.generate(SECRET, expires_in=value)
    with pytest.raises(ValueError, match='^The value of "max_age" is out of range'):
        csrf.verify("token", secret=SECRET, max_age=value)


@pytest.mark.parametrize("value", ["1000", None, True, [1]])
def test_non_numeric_durations(csrf: Any, value: Any) -> None:
    with pytest.raises(TypeError, match='"expires_in" option must be a number of milliseconds or a'):
        csrf.generate(SECRET, expires_in=value)
    with pytest.raises(TypeError, match='"max_age" option must be a number of milliseconds or a'):
        csrf.verify("token", secret=SECRET, max_age=value)


def test_largest_expiry_fits_the_u64_field(csrf: Any) -> None:
    token = csrf.generate(SECRET, expires_in=2**64 - 1)
    assert csrf.verify(token, secret=SECRET) is True


@pytest.mark.parametrize("session_id", [42, b"session", ["s"]])
def test_non_string_session_id(csrf: Any, session_id: Any) -> None:
    with pytest.raises(TypeError, match="^Session ID must be a string$"):
        csrf.generate(SECRET, session_id=session_id)
    with pytest.raises(TypeError, match="^Session ID must be a string$"):
        csrf.verify("token", secret=SECRET, session_id=session_id)


def test_options_are_keyword_only(csrf: Any) -> None:
    with pytest.raises(TypeError):
        csrf.generate(SECRET, 1000)
    with pytest.raises(TypeError):
        csrf.verify("token", SECRET)


def test_errors_and_reprs_never_show_the_secret(csrf: Any) -> None:
    secret = "do-not-print-me"
    token = csrf.generate(secret)
    messages: list[str] = [repr(csrf)]
    for call in (
        lambda: csrf.generate(secret, encoding="base32"),
        lambda: csrf.generate(secret, algorithm="md5"),
        lambda: csrf.generate(secret, expires_in=-1),
        lambda: csrf.verify(token, secret=secret, session_id=1),
    ):
        with pytest.raises((TypeError, ValueError)) as info:
            call()
        messages.append(str(info.value))
    from rt_csrf import profiles

    messages.extend(repr(profile) for profile in profiles._profiles.values())
    assert all(secret not in message for message in messages)


def test_a_fresh_csrf_object_checks_its_first_call(rt_kernel: Any) -> None:
    from rt_csrf.csrf import CSRF

    with pytest.raises(TypeError, match=ENCODING_MESSAGE):
        CSRF().generate(None, encoding=None, algorithm=None)
    csrf = CSRF()
    token = csrf.generate(SECRET)
    with pytest.raises(ValueError, match="^Algorithm not supported$"):  # remembered options do not leak
        csrf.verify(token, secret=SECRET, algorithm="md5")
    assert csrf.verify(token, secret=SECRET) is True
