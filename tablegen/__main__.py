"""``python -m tablegen`` runs the command line."""

import sys

from tablegen.cli import main

if __name__ == "__main__":
    sys.exit(main())
