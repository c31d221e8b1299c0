"""Where the tests find the program and the files shipped with it."""

from pathlib import Path

from perception.keymap import SHIPPED_KEYMAPS as KEYMAPS  # noqa: F401
from perception.world import SHIPPED_WORLDS as WORLDS  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]  # the checkout: main.py, tests/
