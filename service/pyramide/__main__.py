"""``python -m pyramide`` is the ``pyramide`` command."""

import sys

from pyramide.cli import main

sys.exit(main())
