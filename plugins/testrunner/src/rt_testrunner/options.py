"""What a run of ``rt test`` is asked to do, validated: :class:`RunOptions`.

A module of its own so that reading the command line does not import the runner: ``rt test --parallel``'s
main process builds the options and hands them to its workers, and never runs a test itself, so the runner's
modules (collection, fixtures, pytest's items: about 0.04 s of CPU to import) would be imported there for
nothing, on the critical path before its zygote collects the run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from rt_testrunner.pyconfig import PytestConfig


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.frozen(eq=False)
class RunOptions:
    """Everything the runner needs, already validated (see :mod:`rt_testrunner.command`)."""

    root: Path
    timeout_ms: int = 5000
    #: --timeout was given: it applies to pytest-style tests too (pytest has no time-out by default, so without
    #: the flag rt gives them none either, unless a ``timeout`` mark asks for one)
    explicit_timeout: bool = False
    rerun_each: int = 1
    retry: int = 0
    concurrent: bool = False
    max_concurrency: int = 20  # 0: unlimited
    seed: int | None = None  # set when the order is randomized
    bail: int | None = None
    todo: bool = False
    name_pattern: re.Pattern[str] | None = None
    only: bool = False
    preload: tuple[str, ...] = ()
    keyword: str | None = None  # -k expression
    markexpr: str | None = None  # -m expression
    capture: bool = True  # -s / --no-capture turns it off
    pyconfig: PytestConfig | None = None  # the project's pytest configuration (read from root when None)
