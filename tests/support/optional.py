"""The optional extra `envs` (pettingzoo, gymnasium): tests that need it skip, saying what to install, except
in CI (CI=true), where they must run."""

from __future__ import annotations

import importlib.util
import os

import pytest

INSTALL = "pip install -e '.[envs]'"


def needs(package: str) -> None:
    """Skips the test (fails it in CI) where `package` is not installed."""
    if importlib.util.find_spec(package) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{package} is not installed: CI must run the environment tests ({INSTALL})")
        pytest.skip(f"{package} is not installed: {INSTALL}")
