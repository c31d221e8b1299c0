"""`python -m explorer`: the same as `python main.py`, for an installed package."""

from explorer.cli.main import entry_point

entry_point()
