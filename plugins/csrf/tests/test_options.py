"""Expiry, max_age, session binding and the per-thread default secret (spec B, REFERENCE.md "CSRF")."""

from __future__ import annotations

import os
import threading
from datetime import timedelta
from typing import Any

import pytest
from csrf_reference import forge, now_ms, to_raw

SECRET = "options-secret"
DAY_MS = 86_400_000


def _old(age_ms: int, expires_in_ms: int, **options: Any) -> str:
    return forge(SECRET, timestamp_ms=now_ms() - age_ms, expires_in_ms=expires_in_ms, **options)


def test_embedded_expiry_is_enforced(csrf: Any) -> None:
    assert csrf.verify(_old(500, 60_000), secret=SECRET) is True
    assert csrf.verify(_old(61_000, 60_000), secret=SECRET) is False
    assert csrf.verify(_old(61_000, 60_000), secret=SECRET, max_age=0) is False  # max_age=0 does not lift it


def test_max_age_is_enforced_independently_of_the_embedded_expiry(csrf: Any) -> None:
    week_old_token_valid_for_a_year = _old(7 * DAY_MS, 365 * DAY_MS)
    assert csrf.verify(week_old_token_valid_for_a_year, secret=SECRET) is False  # default max_age: one day
    assert csrf.verify(week_old_token_valid_for_a_year, secret=SECRET, max_age=8 * DAY_MS) is True
    assert csrf.verify(week_old_token_valid_for_a_year, secret=SECRET, max_age=6 * DAY_MS) is False


def test_expires_in_zero_never_expires_by_itself(csrf: Any) -> None:
    ten_years_old = _old(3650 * DAY_MS, 0)
    assert csrf.verify(ten_years_old, secret=SECRET, max_age=0) is True
    assert csrf.verify(ten_years_old, secret=SECRET) is False  # ... but max_age still applies


def test_max_age_zero_turns_age_checks_off(csrf: Any) -> None:
    assert csrf.verify(_old(2 * DAY_MS, 0), secret=SECRET, max_age=0) is True
    assert csrf.verify(_old(2 * DAY_MS, 0), secret=SECRET, max_age=DAY_MS) is False


def test_timedelta_is_accepted_for_both_durations(csrf: Any) -> None:
    token = csrf.generate(SECRET, expires_in=timedelta(minutes=5))
    assert int.from_bytes(to_raw(token, "base64url")[24:32], "big") == 300_000
    hour_old = _old(3_600_000, 0)
    assert csrf.verify(hour_old, secret=SECRET, max_age=timedelta(hours=2)) is True
    assert csrf.verify(hour_old, secret=SECRET, max_age=timedelta(minutes=30)) is False


def test_fresh_token_with_short_expiry_verifies(csrf: Any) -> None:
    token = csrf.generate(SECRET, expires_in=60_000)
    assert csrf.verify(token, secret=SECRET) is True


def test_token_without_session_fails_when_verify_gets_one(csrf: Any) -> None:
    token = csrf.generate(SECRET)
    assert csrf.verify(token, secret=SECRET) is True
    assert csrf.verify(token, secret=SECRET, session_id="session-1") is False


def test_token_is_bound_to_its_session(csrf: Any) -> None:
    token = csrf.generate(SECRET, session_id="alice")
    assert csrf.verify(token, secret=SECRET, session_id="alice") is True
    assert csrf.verify(token, secret=SECRET, session_id="bob") is False
    assert csrf.verify(token, secret=SECRET) is False


def _in_thread(function: Any) -> Any:
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(function()))
    thread.start()
    thread.join(timeout=10)
    assert results, "the thread did not finish"
    return results[0]


def test_default_secret_is_per_thread(csrf: Any) -> None:
    token = csrf.generate()
    assert csrf.verify(token) is True  # same thread, no secret: accepted
    assert _in_thread(lambda: csrf.verify(token)) is False  # another thread has another default secret
    assert csrf.verify(token, secret=SECRET) is False

    other_threads_token = _in_thread(lambda: csrf.generate())
    assert csrf.verify(other_threads_token) is False


def test_explicit_secret_works_across_threads(csrf: Any) -> None:
    token = csrf.generate(SECRET, session_id="s")
    assert _in_thread(lambda: csrf.verify(token, secret=SECRET, session_id="s")) is True


def test_default_secret_is_stable_within_a_thread(csrf: Any) -> None:
    tokens = [csrf.generate() for _ in range(5)]
    assert all(csrf.verify(token) for token in tokens)


@pytest.mark.parametrize("encoding", ["base64", "base64url", "hex"])
def test_round_trip_in_every_encoding(csrf: Any, encoding: str) -> None:
    token = csrf.generate(SECRET, encoding=encoding, session_id="s")
    assert csrf.verify(token, secret=SECRET, encoding=encoding, session_id="s") is True


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_forked_child_has_its_own_default_secret_and_nonces(csrf: Any) -> None:
    from rt_csrf.nonces import nonce

    token = csrf.generate()
    nonce(16)  # make sure the parent has a block of nonces buffered
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's teardown
        try:
            verdict = b"1" if csrf.verify(token) else b"0"
            os.write(write_end, verdict + nonce(16))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read()
    os.waitpid(pid, 0)
    assert report[:1] == b"0"  # the parent's default-secret token does not verify in the child
    assert len(report) == 17 and report[1:] != nonce(16)  # and the child did not reuse the parent's nonces
    assert csrf.verify(token) is True


def test_an_empty_session_id_is_never_no_session_id() -> None:
    """As docs/csrf.md says: "" is misuse (TypeError), so a missing session can never verify as "no session"."""
    import rt

    unbound = rt.CSRF.generate("k")
    with pytest.raises(TypeError, match="non-empty"):
        rt.CSRF.verify(unbound, secret="k", session_id="")
    with pytest.raises(TypeError, match="non-empty"):
        rt.CSRF.generate("k", session_id="")
