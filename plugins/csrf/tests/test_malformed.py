"""verify() never raises for a malformed token, and decides on the signature with hmac.compare_digest."""

from __future__ import annotations

import base64
import hmac
from typing import Any

import pytest
from csrf_reference import DIGESTS, ENCODINGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rt

SECRET = "malformed-secret"
CHECKS = settings(  # too_slow too: a loaded machine can make generating examples slow
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

encodings = st.sampled_from(ENCODINGS)
algorithms = st.sampled_from(sorted(DIGESTS))


def _encode(data: bytes, encoding: str) -> str:
    if encoding == "hex":
        return data.hex()
    if encoding == "base64":
        return base64.b64encode(data).decode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _verify(token: str, **options: Any) -> bool:
    result = rt.CSRF.verify(token, secret=SECRET, **options)
    assert isinstance(result, bool)
    return result


@CHECKS
@given(token=st.text(min_size=1, max_size=300), encoding=encodings, algorithm=algorithms)
def test_random_strings_are_refused(rt_kernel: Any, token: str, encoding: str, algorithm: str) -> None:
    assert _verify(token, encoding=encoding, algorithm=algorithm, max_age=0) is False


@CHECKS
@given(data=st.binary(min_size=0, max_size=140), encoding=encodings, algorithm=algorithms)
def test_random_bytes_in_each_encoding_are_refused(
    rt_kernel: Any, data: bytes, encoding: str, algorithm: str
) -> None:
    token = _encode(data, encoding) or "A"
    assert _verify(token, encoding=encoding, algorithm=algorithm, max_age=0) is False


@CHECKS
@given(
    encoding=encodings,
    algorithm=algorithms,
    session_id=st.one_of(st.none(), st.text(min_size=1, max_size=20)),
    cut=st.integers(min_value=1, max_value=300),
)
def test_truncations_are_refused(
    rt_kernel: Any, encoding: str, algorithm: str, session_id: str | None, cut: int
) -> None:
    options = {"encoding": encoding, "algorithm": algorithm, "session_id": session_id}
    token = rt.CSRF.generate(SECRET, **options)
    truncated = token[: max(1, len(token) - cut)]
    # Dropping only base64 padding leaves the same bytes, which the lenient decoder accepts (REFERENCE.md).
    expected = truncated.rstrip("=") == token.rstrip("=")
    assert _verify(truncated, **options) is expected


def _still_valid(candidate: str, token: str, encoding: str) -> bool:
    """REFERENCE.md's leniency as an oracle: one trailing NUL, and for base64 whitespace and padding."""
    text = candidate.removesuffix("\x00")
    if encoding == "hex":
        return text.lower() == token
    text = text.strip(" \t\n\r\f\v")
    body = text.rstrip("=")
    return body == token.rstrip("=") and len(text) - len(body) <= 2


@CHECKS
@given(
    encoding=encodings,
    algorithm=algorithms,
    extra=st.text(min_size=1, max_size=64),
    repeat=st.integers(min_value=1, max_value=200),
)
def test_over_long_input_is_refused(
    rt_kernel: Any, encoding: str, algorithm: str, extra: str, repeat: int
) -> None:
    token = rt.CSRF.generate(SECRET, encoding=encoding, algorithm=algorithm)
    padded = token + extra * repeat
    assert _verify(padded, encoding=encoding, algorithm=algorithm) is _still_valid(padded, token, encoding)


@pytest.mark.parametrize(
    "suffix", ["=", "==", "===", "\x00", " \x00", "\x00 ", "\n", "A", "AAAA", "\x00\x00"]
)
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("algorithm", DIGESTS)
def test_suffixes_follow_the_reference_leniency(
    csrf: Any, encoding: str, suffix: str, algorithm: str
) -> None:
    """Every algorithm: a token of 96 bytes (blake2b512, sha512) has no base64 padding, so ``===`` after it is
    three padding characters, which base64 never has (Hypothesis found the fast path accepting it)."""
    token = csrf.generate(SECRET, encoding=encoding, algorithm=algorithm)
    candidate = token + suffix
    assert csrf.verify(candidate, secret=SECRET, encoding=encoding, algorithm=algorithm) is _still_valid(
        candidate, token, encoding
    )


def test_megabyte_token_is_refused_quickly(csrf: Any) -> None:
    assert csrf.verify("A" * 1_000_000, secret=SECRET) is False
    assert csrf.verify(" " * 1_000_000 + csrf.generate(SECRET), secret=SECRET) is False


def test_reference_leniency_whitespace_nul_alphabet_padding(csrf: Any) -> None:
    token = csrf.generate(SECRET)
    standard = token.replace("-", "+").replace("_", "/")
    for accepted in (f"  {token}\n", token + "\x00", standard, standard + "=" * (-len(standard) % 4)):
        assert csrf.verify(accepted, secret=SECRET) is True, accepted
    for refused in (token + "\x00\x00", token[:40] + " " + token[40:], token[:-1] + "*", "é" + token):
        assert csrf.verify(refused, secret=SECRET) is False, refused
    hex_token = csrf.generate(SECRET, encoding="hex")
    assert csrf.verify(hex_token.upper(), secret=SECRET, encoding="hex") is True
    assert csrf.verify(hex_token + "\x00", secret=SECRET, encoding="hex") is True
    for refused in (
        hex_token[:-1],
        hex_token[:-2] + "zz",
        " " + hex_token,
        hex_token[:10] + " " + hex_token[10:],
    ):
        assert csrf.verify(refused, secret=SECRET, encoding="hex") is False, refused


def test_signatures_are_compared_with_compare_digest(csrf: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    verdict: list[bool] = []
    real_compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return verdict[0] if verdict else real_compare(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    token = csrf.generate(SECRET, session_id="s")
    assert csrf.verify(token, secret=SECRET, session_id="s") is True
    assert len(calls) == 1 and calls[0][0] == calls[0][1] and len(calls[0][0]) == 32

    # verify's answer *is* compare_digest's answer: no other equality test decides on the signature.
    verdict.append(False)
    assert csrf.verify(token, secret=SECRET, session_id="s") is False
    verdict[0] = True
    assert csrf.verify(token, secret=SECRET, session_id="other") is True
    assert len(calls) == 3 and calls[2][0] != calls[2][1]


def test_no_plain_equality_on_signatures_in_the_source() -> None:
    """Design review, kept honest: the verify path names compare_digest and never compares digests with ==."""
    import inspect

    from rt_csrf import csrf as module

    source = inspect.getsource(module.CSRF.verify)
    assert "hmac.compare_digest(" in source
    assert "digest() ==" not in source and "== raw" not in source and "!= raw" not in source
