"""Hook implementations of rt-http: the entry point `http` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used.
"""

from __future__ import annotations
