"""rt.CSRF generate+verify throughput against the peers a Python user would pick instead.

Run on demand (not part of the tests):  uv run python bench/csrf.py [--seconds 0.5] [--rounds 5]

Each contender does one "issue a token, then check it" cycle per iteration:
- rt.CSRF: generate(secret, session_id=...) + verify(token, secret, session_id=...), sha256, base64url.
- rt.CSRF without the keyed-HMAC cache: the same layout, but a fresh ``hmac.new(key, ...)`` per token,
  to show what precomputing the keyed state per (algorithm, secret) buys (see rt_csrf/signing.py).
- itsdangerous TimestampSigner (defaults: HMAC-SHA1, django-concat key derivation): sign(nonce) +
  unsign(signed, max_age=86400). The target is rt >= 2x this.
- Django's CSRF token cost: new secret, mask it into a form token, unmask and compare (no signature;
  Django's tokens are not signed or timestamped, they are compared with the cookie copy).
Every contender is timed in the same process, interleaved per round; the best round counts. Ratios are
rt's throughput over each peer's, so they hold under load better than the absolute numbers do.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import os
import platform
import struct
import sys
import time
from collections.abc import Callable

SECRET = "bench-secret-0123456789abcdef"
SESSION = "session-1234"


def rt_cycle() -> Callable[[], bool]:
    import rt

    csrf = rt.CSRF

    def cycle() -> bool:
        token = csrf.generate(SECRET, session_id=SESSION)
        return csrf.verify(token, secret=SECRET, session_id=SESSION)

    return cycle


def rt_uncached_cycle() -> Callable[[], bool]:
    """The rt layout with hmac.new per token: the baseline the keyed cache is measured against."""
    key = SECRET.encode()
    session = SESSION.encode()
    header = struct.Struct(">Q16sQ")

    def cycle() -> bool:
        head = header.pack(time.time_ns() // 1_000_000, os.urandom(16), 86_400_000)
        token = base64.urlsafe_b64encode(head + hmac.new(key, head + session, "sha256").digest()).rstrip(b"=")
        raw = base64.urlsafe_b64decode(token + b"==")
        expected = hmac.new(key, raw[:32] + session, "sha256").digest()
        return hmac.compare_digest(expected, raw[32:])

    return cycle


def itsdangerous_cycle() -> Callable[[], bool]:
    from itsdangerous import BadSignature, TimestampSigner

    signer = TimestampSigner(SECRET)

    def cycle() -> bool:
        signed = signer.sign(base64.urlsafe_b64encode(os.urandom(16)))
        try:
            signer.unsign(signed, max_age=86_400)
        except BadSignature:
            return False
        return True

    return cycle


def django_cycle() -> Callable[[], bool]:
    from django.conf import settings

    if not settings.configured:
        settings.configure()
    from django.middleware.csrf import _get_new_csrf_string, _mask_cipher_secret, _unmask_cipher_token
    from django.utils.crypto import constant_time_compare

    def cycle() -> bool:
        secret = _get_new_csrf_string()
        form_token = _mask_cipher_secret(secret)
        return constant_time_compare(_unmask_cipher_token(form_token), secret)

    return cycle


def per_second(cycle: Callable[[], bool], seconds: float) -> float:
    """Cycles per second over about ``seconds`` (bounded: at most 2 million cycles)."""
    assert cycle(), "the contender failed its own round trip"
    batch, done = 200, 0
    start = time.perf_counter()
    deadline = start + seconds
    while done < 2_000_000:
        for _ in range(batch):
            cycle()
        done += batch
        if time.perf_counter() >= deadline:
            break
    return done / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per contender per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    contenders = {
        "rt.CSRF": rt_cycle(),
        "rt layout, no keyed cache": rt_uncached_cycle(),
        "itsdangerous TimestampSigner": itsdangerous_cycle(),
        "django mask/unmask": django_cycle(),
    }
    best = dict.fromkeys(contenders, 0.0)
    for _ in range(args.rounds):
        for name, cycle in contenders.items():
            best[name] = max(best[name], per_second(cycle, args.seconds))

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; "
          f"best of {args.rounds} rounds x {args.seconds}s; generate+verify cycles per second")
    rt_rate = best["rt.CSRF"]
    for name, rate in best.items():
        print(f"  {name:<30} {rate:>12,.0f}/s   rt is {rt_rate / rate:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
