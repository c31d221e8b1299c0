"""Entry point: `python main.py --mode mock --agents 2`."""

import sys
import time

STARTED = time.perf_counter()  # before any import that takes time: start-up is measured from here

from explorer.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(started=STARTED))
