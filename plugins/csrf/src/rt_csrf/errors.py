"""The one error class of rt-csrf's own: the reference runtime's ``RangeError`` (code ``ERR_OUT_OF_RANGE``).

Python has no ``RangeError``; ``ValueError`` is its meaning, so the class is a ``ValueError`` (code written for
``except ValueError`` keeps working) with the reference's code for programs that tell misuse apart.
"""

from __future__ import annotations

from typing import Final

OUT_OF_RANGE: Final = "ERR_OUT_OF_RANGE"


class CSRFRangeError(ValueError):
    """An ``expires_in``/``max_age`` out of range: negative, past the u64 field, or not a whole millisecond."""

    code: Final = OUT_OF_RANGE
