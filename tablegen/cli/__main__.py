"""``python -m tablegen.cli`` runs the command line, as ``python -m tablegen`` does."""

import sys

from tablegen.cli import main

if __name__ == "__main__":
    sys.exit(main())
