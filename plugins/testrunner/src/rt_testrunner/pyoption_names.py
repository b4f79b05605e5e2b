"""Which attribute of ``config.option`` an option's name means, as pytest's ``config.getoption`` reads it.

pytest takes either the attribute (``"verbose"``) or any of the option's strings (``"-v"``, ``"--tb"``,
``"--diff-width"``), mapped to the option's ``dest`` by its parser. A plugin reading its own or pytest's
option by a short string (pytest-clarity's ``config.getoption("-v")`` in its ``pytest_assertrepr_compare``)
gets the same value as under pytest; a name taken apart by its dashes alone would miss every option whose
``dest`` is not its long name (``-v`` is ``verbose``, ``--tb`` is ``tbstyle``, a plugin's ``dest=``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: pytest 9's own option strings whose ``dest`` is not the string without its dashes (its parser's
#: ``_opt2dest``, from ``pytest --help``'s options); every other one of its strings is its ``dest`` so spelt
PYTEST_OPTION_DESTS: dict[str, str] = {
    "--assert": "assertmode",
    "--cache-clear": "cacheclear",
    "--cache-show": "cacheshow",
    "-s": "capture",
    "--co": "collectonly",
    "--collect-only": "collectonly",
    "--disable-pytest-warnings": "disable_warnings",
    "--doctest-glob": "doctestglob",
    "--doctest-modules": "doctestmodules",
    "--doctest-report": "doctestreport",
    "--failed-first": "failedfirst",
    "--ff": "failedfirst",
    "--no-fold-skipped": "fold_skipped",
    "--full-trace": "fulltrace",
    "-h": "help",
    "--import-mode": "importmode",
    "--config-file": "inifilename",
    "-c": "inifilename",
    "--junit-prefix": "junitprefix",
    "--keep-duplicates": "keepduplicates",
    "-k": "keyword",
    "--lfnf": "last_failed_no_failures",
    "--last-failed": "lf",
    "--log-disable": "logger_disable",
    "-m": "markexpr",
    "--exitfirst": "maxfail",
    "-x": "maxfail",
    "--new-first": "newfirst",
    "--nf": "newfirst",
    "-o": "override_ini",
    "-p": "plugins",
    "-W": "pythonwarnings",
    "--report-chars": "reportchars",
    "-r": "reportchars",
    "--setup-only": "setuponly",
    "--setup-plan": "setupplan",
    "--setup-show": "setupshow",
    "--fixtures-per-test": "show_fixtures_per_test",
    "--show-capture": "showcapture",
    "--fixtures": "showfixtures",
    "--funcargs": "showfixtures",
    "--no-showlocals": "showlocals",
    "-l": "showlocals",
    "--sw": "stepwise",
    "--sw-reset": "stepwise_reset",
    "--sw-skip": "stepwise_skip",
    "--tb": "tbstyle",
    "--trace-config": "traceconfig",
    "--pdb": "usepdb",
    "--pdbcls": "usepdb_cls",
    "--quiet": "verbose",
    "--verbosity": "verbose",
    "-q": "verbose",
    "-v": "verbose",
    "-V": "version",
    "--junit-xml": "xmlpath",
    "--junitxml": "xmlpath",
}


def option_dest(name: str, specs: Iterable[tuple[tuple[str, ...], dict[str, Any], str]]) -> str:
    """The ``config.option`` attribute of ``name``: an option string of one a plugin or conftest.py
    registered (``specs``: names, argparse attributes, dest) or of pytest's own, else ``name`` itself, as
    pytest's; a ``--long-name`` nobody registered (an option rt keeps under its pytest name without a
    registration) still finds ``long_name``."""
    for names, _, dest in specs:
        if name in names:
            return dest
    if name in PYTEST_OPTION_DESTS:
        return PYTEST_OPTION_DESTS[name]
    return name.lstrip("-").replace("-", "_") if name.startswith("-") else name
