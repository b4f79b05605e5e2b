"""A captured stream read and written as the file pytest gives a test for ``sys.stdout`` and ``sys.stderr``.

pytest's captured ``sys.stdout`` is a file: its fd capture's temporary file, ``capsys``'s ``CaptureIO``. A
test (or a library: pyexcel's ``save_to_memory("csv", sys.stdout)``) may ``seek`` back, ``read``, ``tell``,
``truncate``, and a write after ``seek(0)`` overwrites what is there instead of appending. rt keeps what a
test writes as a list of pieces (the cheap common case, nothing seeks); these functions give that list a
file's position semantics once a test has sought, on the pieces from ``start`` (the running phase's, or what
``capsys`` has not handed back yet).

A position at the end of the text is no position (:func:`place`): ``tell()`` is ``seek(0, 1)``, and a
stream that stored the end as a position would write every later piece through :func:`write_at` (30,000
prints after one ``tell()`` took 17 s instead of 0.1 s when each such write joined the whole text). Writes
at the end append a piece, as before any seek; writes before it cost what they write (:func:`write_at`).
"""

from __future__ import annotations


def sought(length: int, position: int | None, offset: int, whence: int) -> int:
    """The position ``seek(offset, whence)`` moves to in a text of ``length`` characters; ``position``: where
    the stream is (None: at the end, where writes append)."""
    here = length if position is None else position
    base = {0: 0, 1: here, 2: length}.get(whence)
    if base is None:
        raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
    return max(0, base + offset)


def read_from(text: str, position: int | None, size: int | None) -> tuple[str, int]:
    """What ``read(size)`` gives from ``position`` (None: the end), and the position after it."""
    start = len(text) if position is None else min(position, len(text))
    end = len(text) if size is None or size < 0 else min(start + size, len(text))
    return text[start:end], end


def place(positions: dict[str, int], which: str, position: int, length: int) -> int:
    """Keep ``position`` as stream ``which``'s in ``positions``, unless it is the end of the stream's text of
    ``length`` characters (then the stream appends, and has no position); ``position``."""
    if position == length:
        positions.pop(which, None)
    else:
        positions[which] = position
    return position


#: what follows a stream's position while it writes over its text: that text, and where in it the part not
#: yet written over starts (:func:`write_at`)
Tail = tuple[str, int]


def write_at(
    pieces: list[str], start: int, position: int, written: str, tail: Tail | None
) -> tuple[Tail | None, int | None]:
    """Write ``written`` at ``position`` of the text ``pieces[start:]`` make (and ``tail``'s rest), over what
    is there (past the end, the gap is NUL characters, as a file's). The first such write splits the text at
    the position once: the pieces keep what is before it, the tail what follows; each write then appends to
    the pieces and moves past as much of the tail, so a run of writes costs what they write, not the
    output's length each (a test writing a file's lines after ``seek(0)``). Returns the tail left and the
    position after the write, both None at the end of the text (the stream appends again). The text is whole
    again once the tail's rest joins the pieces (:func:`settle`), before anything else reads it."""
    if tail is None:
        text = "".join(pieces[start:])
        if position >= len(text):
            pieces.append("\0" * (position - len(text)) + written)
            return None, None
        del pieces[start:]
        if position:
            pieces.append(text[:position])
        tail = (text, position)
    text, at = tail
    pieces.append(written)
    at += len(written)
    if at >= len(text):
        return None, None
    return (text, at), position + len(written)


def settle(pieces: list[str], tail: Tail | None) -> None:
    """The rest of ``tail`` (what a stream writing over its text has not reached) joins ``pieces`` again."""
    if tail is not None and tail[1] < len(tail[0]):
        pieces.append(tail[0][tail[1] :])


def truncate_to(pieces: list[str], start: int, size: int) -> None:
    """Cut the text ``pieces[start:]`` make to ``size`` characters (a file's ``truncate``: the position stays)."""
    text = "".join(pieces[start:])
    if size < len(text):
        del pieces[start:]
        if size:
            pieces.append(text[:size])
