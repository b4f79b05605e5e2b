"""Hook implementations of rt-testrunner: the entry point `testrunner` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used.
"""

from __future__ import annotations
