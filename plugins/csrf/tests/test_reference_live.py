"""rt and the reference runtime (tools/reference-runtime, run live) give the same answer at the u64 edge.

A token whose issue time plus expiry (or plus the verifier's max_age) does not fit the layout's u64 verified
in rt and not in the reference (whose sum overflows). The tokens are forged with the independent codec of
csrf_reference.py and verified by both runtimes.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from csrf_reference import forge, now_ms

REPO_ROOT = Path(__file__).resolve().parents[3]
BUN = REPO_ROOT / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"
SECRET = "edge-secret"
U64_MAX = 2**64 - 1

VERIFY_SCRIPT = """
const { secret, cases } = JSON.parse(await Bun.stdin.text());
const answers = cases.map(([token, maxAge]) => Bun.CSRF.verify(token, { secret, maxAge }));
console.log(JSON.stringify(answers));
"""


def reference_bun() -> Path:
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        pytest.skip("the reference runtime in tools/reference-runtime is a Linux x86-64 build")
    if not BUN.is_file():
        pytest.fail(
            f"{BUN} is missing: run `npm ci --prefix tools/reference-runtime` (.ci/setup-extra does)",
            pytrace=False,
        )
    return BUN


def reference_verify(cases: list[tuple[str, int]], tmp_path: Path) -> list[bool]:
    script = tmp_path / "verify.mjs"
    script.write_text(VERIFY_SCRIPT, encoding="utf-8")
    result = subprocess.run(
        [str(reference_bun()), str(script)],
        input=json.dumps({"secret": SECRET, "cases": cases}).encode(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    answers: list[bool] = json.loads(result.stdout)
    return answers


def test_the_u64_edge_is_answered_as_the_reference_answers(csrf: Any, tmp_path: Path) -> None:
    now = now_ms()
    cases = [
        (forge(SECRET, timestamp_ms=now, expires_in_ms=U64_MAX), 0),  # past the u64: expired there
        (forge(SECRET, timestamp_ms=now, expires_in_ms=U64_MAX - now - 60_000), 0),  # just fits: valid
        (forge(SECRET, timestamp_ms=now, expires_in_ms=U64_MAX - now + 60_000), 0),  # just past: expired
        (forge(SECRET, timestamp_ms=now - 1000, expires_in_ms=2**63), 86_400_000),
        (forge(SECRET, timestamp_ms=now, expires_in_ms=60_000), 86_400_000),  # an ordinary token
        (forge(SECRET, timestamp_ms=U64_MAX - 1000, expires_in_ms=0), 86_400_000),  # issue time + max_age
    ]
    ours = [csrf.verify(token, secret=SECRET, max_age=max_age) for token, max_age in cases]
    assert ours == reference_verify(cases, tmp_path)
    assert ours[:5] == [False, True, False, True, True]  # the cases mean what their comments say
