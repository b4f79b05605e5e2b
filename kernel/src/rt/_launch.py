"""The ``rt`` console script (and ``python -m rt``): a run a warm server answers costs this module and
:mod:`rt._warm` only.

``rt test`` with the warm start on (RT_TEST_WARM, ``[test] warm``) is made by a warm server's child, and
this process only passes its command line and streams and waits: importing :mod:`rt.cli` first (argparse,
``re``, ``enum``, ``typing``, attrs' code cache) would be 55 M instructions of the 113 M such a client costs
(callgrind, docs/benchmarks.md "Warm start"). So the server is asked before :mod:`rt.cli` is imported, and
every other command, and a test run no server answers, goes on to :func:`rt.cli.main` as before.
"""

from __future__ import annotations

import sys

from rt import _warm


def main() -> int:
    args = sys.argv[1:]
    if _warm.command(args) in _warm.COMMANDS:
        status = _warm.attempt(args)
        if status is not None:
            return status
        _warm.ASKED = True  # rt.cli.main does not ask again
    from rt.cli import main as cli_main

    return cli_main()
