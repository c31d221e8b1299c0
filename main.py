"""Entry point: `python main.py --mode mock --agents 2`."""

import sys
import time

STARTED = time.perf_counter()  # before any import that takes time: start-up is measured from here

try:
    from explorer.cli.main import main
except KeyboardInterrupt:  # Ctrl-C while the program itself loads
    print("main.py: interrupted before the run started", file=sys.stderr)
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main(started=STARTED))
