"""Optional extras (`envs`: pettingzoo, gymnasium; `track`: MLflow; `data`: pandas, pyarrow; `cluster`: Ray):
tests that need one skip, saying what to install, except in CI (CI=true), where they must run."""

from __future__ import annotations

import importlib.util
import os

import pytest


def needs(package: str, extra: str = "envs") -> None:
    """Skips the test (fails it in CI) where `package`, of the optional `extra`, is not installed."""
    if importlib.util.find_spec(package) is None:
        install = f"pip install -e '.[{extra}]'"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{package} is not installed: CI must run the tests of the `{extra}` extra ({install})")
        pytest.skip(f"{package} is not installed: {install}")
