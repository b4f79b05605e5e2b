"""Durations as rt's Python surface takes them: milliseconds (as every rt duration) or a ``timedelta``.

One reading for the client's and fetch's time-outs, so both accept and refuse the same values with the same
one-line errors."""

from __future__ import annotations

from datetime import timedelta


def positive_seconds(value: float | timedelta | None, what: str) -> float | None:
    """``value`` as seconds, None for None (no limit); ``what`` names the option in the error."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000
    else:
        raise TypeError(f"{what} must be milliseconds (int) or a timedelta, got {type(value).__name__}")
    if not seconds > 0:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return seconds
