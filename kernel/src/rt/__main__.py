"""``python -m rt`` is the ``rt`` command."""

import sys

from rt.cli import main

sys.exit(main())
