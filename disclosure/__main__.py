"""``python -m disclosure`` runs the command line."""

import sys

from disclosure.faces.cli import main

sys.exit(main())
