"""pytest's warning filters: the ``filterwarnings`` ini lines and marks (``action:message:category:module:lineno``)
applied around each test, on top of pytest's defaults, as pytest's warnings plugin does.

collect.py applies the same filters while test modules are imported; a category named from pytest is resolved
only once the suite imported pytest (rt never imports it).
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rt_testrunner.pynodes import PyItem


def _resolve_category(name: str) -> type[Warning] | None:
    if not name:
        return Warning
    module_name, _, attr = name.rpartition(".")
    if not module_name:
        import builtins

        found = getattr(builtins, attr, None)
    else:
        if module_name.split(".")[0] == "pytest" and "pytest" not in sys.modules:
            return None
        try:
            import importlib

            found = getattr(importlib.import_module(module_name), attr, None)
        except ImportError:
            return None
    return found if isinstance(found, type) and issubclass(found, Warning) else None


def apply_filter(text: str) -> None:
    """One pytest warning filter ``action:message:category:module:lineno``."""
    parts = [p.strip() for p in text.split(":", 4)]
    parts += [""] * (5 - len(parts))
    action, message, category_name, module, lineno = parts
    category = _resolve_category(category_name)
    if category is None:
        return
    try:
        warnings.filterwarnings(action or "default", message, category, module, int(lineno or 0))  # type: ignore[arg-type]
    except (ValueError, re.error, AssertionError):
        return


def apply_warning_filters(item: PyItem) -> None:
    warnings.simplefilter("default")
    warnings.filterwarnings("always", category=DeprecationWarning)
    warnings.filterwarnings("always", category=PendingDeprecationWarning)
    for text in item.session.warning_filters:
        apply_filter(text)
    for mark in reversed(item.node.own_markers):
        if mark.name == "filterwarnings":
            for text in mark.args:
                apply_filter(text)
