"""Hook implementations of rt-csrf: the entry point `csrf` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used.
"""

from __future__ import annotations
