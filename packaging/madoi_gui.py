"""PyInstaller's entry script of the bundle's ``madoi`` and ``madoi-gui``: the window without options, otherwise the
command line (``madoi --headless``, ``madoi search ...``), as ``app.main.main``."""

import sys

from app.main import main

if __name__ == "__main__":
    # Command-line options still work from a terminal (e.g. ``madoi --headless``); a double click passes none.
    sys.exit(main(sys.argv[1:]))
