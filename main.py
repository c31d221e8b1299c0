"""Entry point: `python main.py --mode mock --agents 2`."""

import sys

from explorer.cli import main

if __name__ == "__main__":
    sys.exit(main())
