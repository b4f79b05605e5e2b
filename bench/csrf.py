"""rt.CSRF generate+verify throughput against the peers a Python user would pick instead.

Run on demand (not part of the tests):  uv run python bench/csrf.py [--seconds 0.5] [--rounds 9]

Each contender does one "issue a token, then check it" cycle per iteration:
- rt.CSRF: generate(secret, session_id=...) + verify(token, secret, session_id=...), sha256, base64url,
  with ``csrf = rt.CSRF`` bound once (as docs/csrf.md recommends); and the same reading ``rt.CSRF`` from
  the module on each call, which adds the kernel's lazy-namespace lookup twice per cycle.
- a hand-written inline version of the same layout (no argument checks, no kernel, ``hmac.digest`` per
  token): the floor a single-purpose function could reach, to show what rt's checks and plugins cost.
- itsdangerous TimestampSigner (defaults: HMAC-SHA1, django-concat key derivation): sign(nonce) +
  unsign(signed, max_age=86400). The target is rt >= 2x this.
- Django's CSRF token cost: new secret, mask it into a form token, unmask and compare (no signature;
  Django's tokens are not signed or timestamped, they are compared with the cookie copy).
- the reference runtime (tools/reference-runtime, bin/bun): its own ``Bun.CSRF.generate`` + ``verify`` loop with
  the same secret, session id, sha256 and base64url, in a small script run once per round for the same time
  (``REFERENCE_LOOP``); it prints cycles per second. Skipped, with a note, where that binary is missing.
Every Python contender is timed in the same process, interleaved per round (the reference in its own process,
in the same round). A ratio is rt's throughput over a
peer's within one round (so background load hits both alike); the median over rounds is printed, with the
spread, and the best round's absolute rate.

A second table times signing alone (one 44-byte message, sha256): a keyed HMAC object copied per token,
as rt_csrf/signing.py does, against ``hmac.digest(key, ...)`` and ``hmac.new(key, ...)`` per token.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SECRET = "bench-secret-0123456789abcdef"
SESSION = "session-1234"
BUN = Path(__file__).resolve().parents[1] / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"

# The reference runtime's generate+verify cycle, timed as per_second() times ours: batches of 200 until the time
# is up, after one checked round trip.
REFERENCE_LOOP = """
const [secret, sessionId, seconds] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const cycle = () => Bun.CSRF.verify(Bun.CSRF.generate(secret, { sessionId }), { secret, sessionId });
if (!cycle()) throw new Error("the reference failed its own round trip");
let done = 0;
const start = performance.now(), deadline = start + seconds * 1000;
while (done < 2_000_000) {
  for (let i = 0; i < 200; i++) cycle();
  done += 200;
  if (performance.now() >= deadline) break;
}
console.log(done / ((performance.now() - start) / 1000));
"""


def rt_cycle() -> Callable[[], bool]:
    import rt

    csrf = rt.CSRF

    def cycle() -> bool:
        token = csrf.generate(SECRET, session_id=SESSION)
        return csrf.verify(token, secret=SECRET, session_id=SESSION)

    return cycle


def rt_namespace_cycle() -> Callable[[], bool]:
    """As rt_cycle, but reading ``rt.CSRF`` on every call, as code that never binds it does."""
    import rt

    def cycle() -> bool:
        token = rt.CSRF.generate(SECRET, session_id=SESSION)
        return rt.CSRF.verify(token, secret=SECRET, session_id=SESSION)

    return cycle


def inline_cycle() -> Callable[[], bool]:
    """The rt layout written inline with hmac.digest per token, without checks or the kernel."""
    key = SECRET.encode()
    session = SESSION.encode()
    header = struct.Struct(">Q16sQ")

    def cycle() -> bool:
        head = header.pack(time.time_ns() // 1_000_000, os.urandom(16), 86_400_000)
        token = base64.urlsafe_b64encode(head + hmac.digest(key, head + session, "sha256")).rstrip(b"=")
        raw = base64.urlsafe_b64decode(token + b"==")
        expected = hmac.digest(key, raw[:32] + session, "sha256")
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


def signing_variants() -> dict[str, Callable[[], bool]]:
    from rt_csrf.signing import keyed_mac

    key, message = SECRET.encode(), bytes(44)
    keyed = keyed_mac(hashlib.sha256, key)

    def keyed_copy() -> bool:
        mac = keyed.copy()
        mac.update(message)
        return bool(mac.digest())

    return {
        "keyed object, copy() per token": keyed_copy,
        "hmac.digest(key, msg) per token": lambda: bool(hmac.digest(key, message, "sha256")),
        "hmac.new(key, msg) per token": lambda: bool(hmac.new(key, message, hashlib.sha256).digest()),
    }


def reference_per_second(script: Path, seconds: float) -> float:
    """Cycles per second of the reference runtime's own loop (its start-up is not timed)."""
    result = subprocess.run(
        [str(BUN), str(script), SECRET, SESSION, str(seconds)], capture_output=True, timeout=120, check=True
    )
    return float(result.stdout.decode().strip())


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
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    # Run as a script, bench/ is sys.path[0], where a script named like a standard module would shadow it
    # (which Django imports): the contenders import from site-packages and the standard library only.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]

    contenders = {
        "rt.CSRF": rt_cycle(),
        "rt.CSRF read on rt. every call": rt_namespace_cycle(),
        "inline floor (no checks)": inline_cycle(),
        "itsdangerous TimestampSigner": itsdangerous_cycle(),
        "django mask/unmask": django_cycle(),
    }
    reference = "reference runtime (bun)"
    script = Path(tempfile.mkdtemp(prefix="rt-bench-csrf-")) / "loop.mjs"
    script.write_text(REFERENCE_LOOP, encoding="utf-8")
    names = [*contenders, reference] if BUN.is_file() else list(contenders)
    best = dict.fromkeys(names, 0.0)
    ratios: dict[str, list[float]] = {name: [] for name in names}
    read_each_time: list[float] = []  # rt.CSRF read through `rt.` on every call, over itsdangerous
    for _ in range(args.rounds):
        rates = {name: per_second(cycle, args.seconds) for name, cycle in contenders.items()}
        if BUN.is_file():
            rates[reference] = reference_per_second(script, args.seconds)
        for name, rate in rates.items():
            best[name] = max(best[name], rate)
            ratios[name].append(rates["rt.CSRF"] / rate)  # within one round, so load hits both sides alike
        read_each_time.append(rates["rt.CSRF read on rt. every call"] / rates["itsdangerous TimestampSigner"])

    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; "
        f"{args.rounds} rounds x {args.seconds}s per contender; generate+verify cycles per second"
    )
    print(f"  {'':<32} {'best round':>14}   rt / peer: median of rounds (min-max)")
    if not BUN.is_file():
        print(f"  (no reference runtime column: {BUN} is missing; npm ci --prefix tools/reference-runtime)")
    for name, rate in best.items():
        spread = sorted(ratios[name])
        print(
            f"  {name:<32} {rate:>12,.0f}/s   {statistics.median(spread):5.2f}x ({spread[0]:.2f}-{spread[-1]:.2f})"
        )

    spread = sorted(read_each_time)
    print(
        f"  rt.CSRF read on rt. every call / itsdangerous: {statistics.median(spread):.2f}x "
        f"({spread[0]:.2f}-{spread[-1]:.2f}; the target is >= 2x)"
    )

    signing = signing_variants()
    fastest = dict.fromkeys(signing, 0.0)
    for _ in range(args.rounds):
        for name, sign in signing.items():
            fastest[name] = max(fastest[name], per_second(sign, args.seconds / 2))
    print("signing only (sha256, 44-byte message), signatures per second")
    keyed_rate = fastest["keyed object, copy() per token"]
    for name, rate in fastest.items():
        print(f"  {name:<32} {rate:>12,.0f}/s   keyed copy is {keyed_rate / rate:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
