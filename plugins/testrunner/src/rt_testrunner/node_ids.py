"""Node ids given on the command line that name nothing (``tests/test_a.py::nope``).

pytest collects what each argument names and, when a node id's file holds no node of that name, stops before
any test with ``ERROR: not found: <file>::<name>``, status 4 (a usage error): a typo in a node id is not a
green run of nothing. rt collects a file given with node ids only for those (``TestFile.selectors``); this
module finds the first selector that no collected test, and no node that failed to collect, answers to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rt_testrunner.discovery import TestFile
from rt_testrunner.model import Suite


def answers(own: str, selector: str) -> bool:
    """The node ``own`` (its id inside the file: ``Class::test[id]``) is, or is inside, ``selector``'s node, as
    pytest matches the parts of a node id: ``test`` takes each of its parameters, ``test[1]`` only that one."""
    return (
        own == selector
        or own.startswith(selector + "::")
        or ("[" not in selector and own.split("[", 1)[0] == selector)
    )


def _own_ids(root: Suite) -> list[str] | None:
    """The ids inside the file of the tests collected from it, of its nodes that failed to collect and of its
    test classes that collected none (pytest runs nothing for those: no tests ran, status 5); None
    when a test is one of rt's own (``test()``, ``describe``), whose names are not pytest's node ids."""
    ids: list[str] = []
    for case in root.tests():
        if case.item is None:
            return None
        nodeid = str(getattr(case.item, "nodeid", ""))
        ids.append(nodeid.split("::", 1)[1] if "::" in nodeid else case.name)
    ids.extend("::".join(path) for path, _ in root.collect_errors or ())
    ids.extend("::".join(path) for path in root.empty_nodes or ())
    return ids


def first_not_found(files: Sequence[TestFile], collected: Mapping[Path, object]) -> str | None:
    """``<file>::<selector>`` for the first node id of the command line whose file collected (a file that
    failed to is its own error) but holds nothing it names, as pytest's message writes it; else None."""
    for test_file in files:
        if not test_file.selectors:
            continue
        root = collected.get(test_file.path)
        if not isinstance(root, Suite):
            continue
        ids = _own_ids(root)
        if ids is None:
            continue
        missing = _unanswered(test_file.selectors, ids)
        if missing is not None:
            # pytest names the function without the parameters' id (``test_a[1]``: ``::test_a``)
            return f"{test_file.path}::{missing.split('[', 1)[0]}"
    return None


def _unanswered(selectors: Sequence[str], ids: Sequence[str]) -> str | None:
    """The first selector nothing answers to, leaving out one inside another selector of the same file
    (``TestA`` and ``TestA::nope``: pytest collects ``TestA`` once and does not look for the other)."""
    for selector in selectors:
        if any(other != selector and answers(selector, other) for other in selectors):
            continue
        if not any(answers(own, selector) for own in ids):
            return selector
    return None
