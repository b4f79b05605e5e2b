"""rt-debug's tests import their inspector client (tests/inspector_client.py) as a plain module."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
