"""``python -m rt`` is the ``rt`` command."""

import sys

from rt._launch import main

sys.exit(main())
