"""The framework the nodes are written in: PocketFlow's Node and Flow, from the one module that imports it,
so that its version (pinned in pyproject.toml) or the framework itself changes here only."""

from pocketflow import Flow, Node

__all__ = ["Flow", "Node"]
