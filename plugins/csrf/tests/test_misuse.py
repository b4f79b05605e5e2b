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


@pytest.mark.parametrize(
    "value", [0.5, 1.5, 999.999, timedelta(microseconds=900), timedelta(milliseconds=1, microseconds=1)]
)
def test_a_fraction_of_a_millisecond_is_out_of_range_not_truncated(csrf: Any, value: Any) -> None:
    """0.5 used to become 0, "never expires" / "no age check": the reference throws a RangeError instead."""
    from rt_csrf.errors import CSRFRangeError

    message = r'^The value of "{}" is out of range\. It must be an integer number of milliseconds\. Received '
    with pytest.raises(CSRFRangeError, match=message.format("expires_in")) as info:
        csrf.generate(SECRET, expires_in=value)
    assert isinstance(info.value, ValueError) and info.value.code == "ERR_OUT_OF_RANGE"
    with pytest.raises(CSRFRangeError, match=message.format("max_age")):
        csrf.verify("token", secret=SECRET, max_age=value)


@pytest.mark.parametrize("value", [1000.0, timedelta(seconds=1), timedelta(microseconds=1_000_000)])
def test_whole_milliseconds_in_a_float_or_timedelta_are_accepted(csrf: Any, value: Any) -> None:
    token = csrf.generate(SECRET, expires_in=value)
    assert csrf.verify(token, secret=SECRET, max_age=value) is True


def test_an_expiry_past_the_u64_range_does_not_verify(csrf: Any) -> None:
    """issue time + expires_in past 2**64 - 1 is expired, as in the reference (its u64 sum overflows)."""
    token = csrf.generate(SECRET, expires_in=2**64 - 1)
    assert csrf.verify(token, secret=SECRET, max_age=0) is False
    assert csrf.verify(token, secret=SECRET) is False


@pytest.mark.parametrize("session_id", [42, b"session", ["s"]])
def test_non_string_session_id(csrf: Any, session_id: Any) -> None:
    with pytest.raises(TypeError, match="^Session ID must be a string$"):
        csrf.generate(SECRET, session_id=session_id)
    with pytest.raises(TypeError, match="^Session ID must be a string$"):
        csrf.verify("token", secret=SECRET, session_id=session_id)


def test_empty_session_id_is_misuse_in_both_calls(csrf: Any) -> None:
    """ "" is not "no session": the reference throws "sessionId must be a non-empty string"."""
    token = csrf.generate(SECRET)
    with pytest.raises(TypeError, match="^Session ID must be a non-empty string$"):
        csrf.generate(SECRET, session_id="")
    with pytest.raises(TypeError, match="^Session ID must be a non-empty string$"):
        csrf.verify(token, secret=SECRET, session_id="")


def test_verify_still_never_raises_on_a_malformed_token_with_a_session(csrf: Any) -> None:
    for token in ("x", "A" * 86, "%%%", "\x00", "A" * 5000, "zz" * 48):
        assert csrf.verify(token, secret=SECRET, session_id="s", max_age=0) is False


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
