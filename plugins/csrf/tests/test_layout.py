"""Tokens made here have the reference layout, checked field by field with hashlib/hmac alone."""

from __future__ import annotations

import hmac
import re
from typing import Any

import pytest
from csrf_reference import DIGESTS, ENCODINGS, expected_signature, now_ms, to_raw

SECRET = "layout-secret"


@pytest.mark.parametrize("algorithm", sorted(DIGESTS))
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("session_id", [None, "session-42", "sess-ü-🍪"])
def test_generated_token_decodes_to_the_reference_layout(
    csrf: Any, algorithm: str, encoding: str, session_id: str | None
) -> None:
    before = now_ms()
    token = csrf.generate(
        SECRET, expires_in=12_345, encoding=encoding, algorithm=algorithm, session_id=session_id
    )
    after = now_ms()

    raw = to_raw(token, encoding)
    signature_size = DIGESTS[algorithm]().digest_size
    assert len(raw) == 32 + signature_size
    assert before <= int.from_bytes(raw[0:8], "big") <= after  # timestamp, ms since the epoch, big-endian
    assert len(raw[8:24]) == 16 and raw[8:24] != bytes(16)  # the nonce
    assert int.from_bytes(raw[24:32], "big") == 12_345  # expires_in, ms, big-endian
    assert hmac.compare_digest(raw[32:], expected_signature(SECRET, raw[:32], session_id, algorithm))


def test_sha256_base64url_is_86_characters_without_padding(csrf: Any) -> None:
    token = csrf.generate(SECRET)
    assert len(token) == 86
    assert re.fullmatch(r"[A-Za-z0-9_-]{86}", token)


def test_base64_keeps_padding_and_hex_is_lowercase(csrf: Any) -> None:
    assert re.fullmatch(r"[A-Za-z0-9+/]{86}==", csrf.generate(SECRET, encoding="base64"))
    assert re.fullmatch(r"[0-9a-f]{128}", csrf.generate(SECRET, encoding="hex"))
    assert len(csrf.generate(SECRET, encoding="hex", algorithm="sha512")) == 2 * 96


def test_default_expiry_is_a_day_and_nonces_differ(csrf: Any) -> None:
    tokens = [to_raw(csrf.generate(SECRET), "base64url") for _ in range(200)]
    assert {int.from_bytes(raw[24:32], "big") for raw in tokens} == {86_400_000}
    assert len({raw[8:24] for raw in tokens}) == 200


def test_session_id_is_signed_as_utf8(csrf: Any) -> None:
    token = csrf.generate(SECRET, session_id="naïve ☃")
    raw = to_raw(token, "base64url")
    assert raw[32:] == expected_signature(SECRET, raw[:32], "naïve ☃", "sha256")
    assert csrf.verify(token, secret=SECRET, session_id="naïve ☃") is True
