"""A decision policy of the user's own: `--model package.module:Class` (or a profile's `model:`).

The class is imported by that path and called once per agent with a `PolicySetup`; what it makes meets the
`DecisionPolicy` protocol (nodes/interfaces.py): a `name`, and `decide(prompt, context) -> DecisionOutcome`.
The module is found as any import is (installed, or on PYTHONPATH), and in the current directory.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from explorer.config.run_config import ConfigError
from nodes.interfaces import DecisionPolicy

# A dotted module path, ':', then a class (or a dotted path inside the module). A litellm model's name
# never has this shape: its provider comes before a '/', and what follows a ':' is a tag such as 8b.
PLUGIN_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class PolicySetup:
    """What a plug-in policy is made with, once per agent."""

    agent_id: str  # "Agent1", ...
    seed: int  # the agent's own seed, made from the run's --seed: the same on every run


PolicyClass = Callable[[PolicySetup], DecisionPolicy]


def is_plugin(model: str) -> bool:
    """True for a model name that names a policy class, `package.module:Class`."""
    return PLUGIN_NAME.fullmatch(model) is not None


def plugin_name(policy_class: type) -> str:
    """The `package.module:Class` name that loads `policy_class` again."""
    return f"{policy_class.__module__}:{policy_class.__qualname__}"


def load_plugin(name: str) -> PolicyClass:
    """The policy class `name` gives; ConfigError, one line, where it cannot be imported or is no policy."""
    module_name, _, path = name.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # as `python -m` would: a module beside the user, after what is installed
    try:
        found: object = importlib.import_module(module_name)
    except Exception as error:  # the user's module: a missing one, or one that fails as it is imported
        detail = " ".join(str(error).split())  # one line
        raise ConfigError(f"--model {name}: cannot import {module_name}: {type(error).__name__}: {detail}") from None
    for part in path.split("."):
        if not hasattr(found, part):
            raise ConfigError(f"--model {name}: {module_name} has no {path}")
        found = getattr(found, part)
    if not isinstance(found, type) or not callable(getattr(found, "decide", None)):
        raise ConfigError(
            f"--model {name}: {path} is not a policy class (a class with decide(prompt, context); see explorer/api.py)"
        )
    return found
