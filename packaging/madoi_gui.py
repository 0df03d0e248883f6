"""PyInstaller's entry script: the same as the ``madoi-gui`` command (the window, no console)."""

import sys

from app.main import main

if __name__ == "__main__":
    # Command-line options still work from a terminal (e.g. ``madoi --headless``); a double click passes none.
    sys.exit(main(sys.argv[1:]))
