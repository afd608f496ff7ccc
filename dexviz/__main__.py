"""``python -m dexviz``: the same command line as the ``dexviz`` script."""

import sys

from dexviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
