"""``rt.CSRF``: generate and verify signed, expiring anti-forgery tokens (spec section B).

Tokens use the reference runtime's byte layout (:mod:`rt_csrf.layout`), so a token made here verifies there
and the other way round. ``verify`` answers ``False`` for every token that is malformed, forged, expired or
made for other options, and raises only for misuse, with the reference runtime's messages.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final

from rt.interfaces import KernelView
from rt.kernel import get_kernel
from rt_csrf.errors import CSRFRangeError
from rt_csrf.layout import HEADER, HEADER_SIZE, NONCE_SIZE, TIMES, U64_MAX
from rt_csrf.nonces import nonce
from rt_csrf.profiles import ALGORITHM_ERROR, SECRET_ERROR, Profile, profile_for
from rt_csrf.signing import utf8

__all__ = [
    "ALGORITHM_ERROR",
    "CSRF",
    "SECRET_ERROR",
    "SESSION_ID_EMPTY_ERROR",
    "SESSION_ID_ERROR",
    "TOKEN_ERROR",
    "CSRFRangeError",
]

TOKEN_ERROR: Final = "Token must be a non-empty string"
SESSION_ID_ERROR: Final = "Session ID must be a string"
# An empty session id is misuse, not "no session" (the reference runtime throws this TypeError in both calls):
# a caller whose session lookup returned "" would otherwise issue tokens that any session's verify accepts.
SESSION_ID_EMPTY_ERROR: Final = "Session ID must be a non-empty string"

DEFAULT_EXPIRES_IN_MS: Final = 86_400_000
DEFAULT_MAX_AGE_MS: Final = 86_400_000

_ONE_MS: Final = timedelta(milliseconds=1)

Duration = int | float | timedelta

# In the initial ``_last``: no caller can pass it, so the first call always takes the checked path.
_UNSET: Any = object()


class CSRF:
    """``rt.CSRF``: ``generate`` and ``verify``, using the HMAC algorithms registered in one kernel.

    The kernel makes one when ``rt.CSRF`` is first used (``NamespaceEntry.load`` passes it the kernel), and a
    new one after a plugin is registered or unregistered (it re-resolves its names then). The object keeps
    that kernel's plugin host, so a call never looks the current kernel up; an algorithm it has not seen is
    looked up in the host's registry as it is now, so one registered later is found too.
    """

    __slots__ = ("_host", "_last", "_registry")

    def __init__(self, kernel: KernelView | None = None) -> None:
        self._host = (kernel if kernel is not None else get_kernel()).host
        self._registry: Mapping[str, Any] = self._host.hmac_algorithms()
        # The last (secret, encoding, algorithm) objects seen with an explicit secret, and their profile. An
        # application passes the same objects on every request, so three identity tests replace the profile
        # lookup (bench/csrf.py). Replaced as one tuple, so threads never see a torn entry.
        self._last: tuple[object, object, object, Profile] = (_UNSET, _UNSET, _UNSET, _UNSET)

    def __repr__(self) -> str:
        return f"<rt.CSRF algorithms={sorted(self._registry)}>"

    def _profile(self, secret: object, encoding: object, algorithm: object) -> Profile:
        self._registry = self._host.hmac_algorithms()  # the same dict until a plugin comes or goes
        profile = profile_for(self._registry, secret, encoding, algorithm)
        if secret is not None:  # the default secret differs per thread: never remembered here
            self._last = (secret, encoding, algorithm, profile)
        return profile

    def generate(
        self,
        secret: str | None = None,
        *,
        expires_in: Duration = DEFAULT_EXPIRES_IN_MS,
        encoding: str = "base64url",
        algorithm: str = "sha256",
        session_id: str | None = None,
    ) -> str:
        """A new token signed with ``secret`` (default: this thread's random secret).

        ``expires_in`` is in milliseconds (or a ``timedelta``); 0 makes a token that never expires by itself
        (``verify``'s ``max_age`` still applies). Pass ``session_id`` to bind the token to one session.
        """
        last = self._last
        if secret is last[0] and encoding is last[1] and algorithm is last[2]:
            profile = last[3]
        else:
            profile = self._profile(secret, encoding, algorithm)
        if type(expires_in) is not int or not 0 <= expires_in <= U64_MAX:  # the int case skips a call
            expires_in = _duration_ms(expires_in, "expires_in")
        if session_id is None:
            session = b""
        elif type(session_id) is str and session_id and session_id.isascii():  # the common case, no call
            session = session_id.encode("ascii")
        else:
            session = _session_bytes(session_id)
        header = HEADER.pack(time.time_ns() // 1_000_000, nonce(NONCE_SIZE), expires_in)
        mac = profile.mac.copy()
        mac.update(header + session)
        return profile.encode(header + mac.digest())

    def verify(
        self,
        token: str,
        *,
        secret: str | None = None,
        max_age: Duration = DEFAULT_MAX_AGE_MS,
        encoding: str = "base64url",
        algorithm: str = "sha256",
        session_id: str | None = None,
    ) -> bool:
        """True only for a well-formed, unexpired token made with these options; never raises for a bad token.

        ``max_age`` (milliseconds or ``timedelta``) is checked against the token's issue time independently of
        the token's own expiry; 0 turns it off. The signature is compared with ``hmac.compare_digest``.
        """
        if not isinstance(token, str):
            raise TypeError(TOKEN_ERROR)
        if not token:
            raise ValueError(TOKEN_ERROR)
        last = self._last
        if secret is last[0] and encoding is last[1] and algorithm is last[2]:
            profile = last[3]
        else:
            profile = self._profile(secret, encoding, algorithm)
        if type(max_age) is not int or not 0 <= max_age <= U64_MAX:
            max_age = _duration_ms(max_age, "max_age")
        if session_id is None:
            session = b""
        elif type(session_id) is str and session_id and session_id.isascii():  # the common case, no call
            session = session_id.encode("ascii")
        else:
            session = _session_bytes(session_id)

        raw = profile.decode(token)
        if raw is None or len(raw) != profile.token_size:
            return False
        timestamp_ms, expires_in_ms = TIMES.unpack_from(raw)
        now_ms = time.time_ns() // 1_000_000
        # The token's own expiry and the verifier's max_age are independent; 0 switches either off. A token
        # dated in the future is not refused: REFERENCE.md lists no such check.
        # A sum past 2**64 - 1 is expired, as in the reference runtime, whose u64 sum overflows (wraps below
        # ``now``): an issue time plus expiry that the layout cannot hold is never "not yet expired".
        if expires_in_ms and not now_ms <= timestamp_ms + expires_in_ms <= U64_MAX:
            return False
        if max_age and not now_ms <= timestamp_ms + max_age <= U64_MAX:
            return False
        mac = profile.mac.copy()
        mac.update(raw[:HEADER_SIZE] + session)
        return hmac.compare_digest(mac.digest(), raw[HEADER_SIZE:])


def _duration_ms(value: object, name: str) -> int:
    """Whole milliseconds from an ``int``/``float`` of milliseconds or a ``timedelta``, within the layout's u64.

    A fraction of a millisecond is refused, as the reference runtime refuses a non-integer: truncating 0.5 or
    ``timedelta(microseconds=900)`` to 0 would turn "expires almost at once" into "never expires" (and a
    ``max_age`` into "no age check"), failing open.
    """
    if type(value) is int and 0 <= value <= U64_MAX:  # the common case, checked first: it is on every call
        return value
    if isinstance(value, timedelta):
        ms, rest = divmod(value, _ONE_MS)
        if rest:
            raise CSRFRangeError(_not_integer(name, value))
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f'The "{name}" option must be a number of milliseconds or a datetime.timedelta, '
            f"not {type(value).__name__}"
        )
    elif isinstance(value, float):
        if not value.is_integer():  # also NaN and the infinities
            raise CSRFRangeError(_not_integer(name, value))
        ms = int(value)
    else:
        ms = int(value)
    if not 0 <= ms <= U64_MAX:
        raise CSRFRangeError(
            f'The value of "{name}" is out of range. It must be >= 0 and <= {U64_MAX} milliseconds. '
            f"Received {value!r}"
        )
    return ms


def _not_integer(name: str, value: object) -> str:
    return f'The value of "{name}" is out of range. It must be an integer number of milliseconds. Received {value!r}'


def _session_bytes(session_id: object) -> bytes:
    if session_id is None:
        return b""
    if not isinstance(session_id, str):
        raise TypeError(SESSION_ID_ERROR)
    if not session_id:
        raise TypeError(SESSION_ID_EMPTY_ERROR)
    return utf8(session_id)
