"""``python -m disclosure`` runs the command line."""

import sys

from disclosure.cli import main

sys.exit(main())
