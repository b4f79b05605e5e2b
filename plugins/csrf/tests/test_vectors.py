"""The 36 tokens made by the reference runtime verify here, and every kind of tampering makes them fail."""

from __future__ import annotations

from typing import Any

import pytest
from csrf_reference import DIGESTS, ENCODINGS, from_raw, load_vectors, to_raw

VECTORS = load_vectors()


def _options(vector: dict[str, Any], **changes: Any) -> dict[str, Any]:
    options = {
        "secret": vector["secret"],
        "max_age": 0,  # the vectors are older than a day and were made with expires_in 0
        "encoding": vector["encoding"],
        "algorithm": vector["algorithm"],
        "session_id": vector["sessionId"],
    }
    options.update(changes)
    return options


def _label(vector: dict[str, Any]) -> str:
    return f"{vector['algorithm']}-{vector['encoding']}-{'session' if vector['sessionId'] else 'nosession'}"


def test_the_vectors_cover_every_algorithm_encoding_and_session_combination() -> None:
    combos = {(v["algorithm"], v["encoding"], v["sessionId"] is not None) for v in VECTORS}
    assert len(VECTORS) == 36
    assert combos == {(a, e, s) for a in DIGESTS for e in ENCODINGS for s in (False, True)}


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_reference_token_verifies(csrf: Any, vector: dict[str, Any]) -> None:
    assert csrf.verify(vector["token"], **_options(vector)) is True


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_reference_token_fails_a_max_age_it_is_older_than(csrf: Any, vector: dict[str, Any]) -> None:
    # The vectors carry expires_in 0, so only max_age can refuse them; they are far older than 1 ms.
    assert csrf.verify(vector["token"], **_options(vector, max_age=1)) is False


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_any_flipped_byte_fails(csrf: Any, vector: dict[str, Any]) -> None:
    raw = to_raw(vector["token"], vector["encoding"])
    for position in range(len(raw)):  # timestamp, nonce, expiry and signature bytes alike
        for mask in (0x01, 0x80):
            tampered = bytearray(raw)
            tampered[position] ^= mask
            token = from_raw(bytes(tampered), vector["encoding"])
            assert csrf.verify(token, **_options(vector)) is False, (position, mask)


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_wrong_secret_fails(csrf: Any, vector: dict[str, Any]) -> None:
    for secret in ("vector-secreT", "vector-secret ", "other", vector["secret"] * 2):
        assert csrf.verify(vector["token"], **_options(vector, secret=secret)) is False


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_wrong_session_id_fails(csrf: Any, vector: dict[str, Any]) -> None:
    if vector["sessionId"] is None:
        wrong: list[str | None] = ["session-42", "x", " "]  # given one though the token has none
    else:
        wrong = [None, "session-43", vector["sessionId"] + " ", vector["sessionId"].upper()]
    for session_id in wrong:
        assert csrf.verify(vector["token"], **_options(vector, session_id=session_id)) is False, session_id


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_wrong_algorithm_fails(csrf: Any, vector: dict[str, Any]) -> None:
    for algorithm in DIGESTS:
        if algorithm != vector["algorithm"]:
            assert csrf.verify(vector["token"], **_options(vector, algorithm=algorithm)) is False, algorithm


@pytest.mark.parametrize("vector", VECTORS, ids=_label)
def test_wrong_encoding_fails(csrf: Any, vector: dict[str, Any]) -> None:
    # hex against either base64 flavour fails both ways. base64 and base64url are one family on purpose:
    # REFERENCE.md has verify decode either alphabet leniently, so those two accept each other's tokens.
    base64_family = {"base64", "base64url"}
    for encoding in ENCODINGS:
        options = _options(vector, encoding=encoding)
        if encoding == vector["encoding"]:
            continue
        if {encoding, vector["encoding"]} <= base64_family:
            assert csrf.verify(vector["token"], **options) is True
        else:
            assert csrf.verify(vector["token"], **options) is False, encoding
