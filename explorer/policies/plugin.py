"""A decision policy of the user's own: `--model package.module:Class` (or a profile's `model:`).

The class is imported by that path and called once per agent with a `PolicySetup`; what it makes meets the
`DecisionPolicy` protocol (nodes/interfaces.py): a `name`, and `decide(prompt, context) -> DecisionOutcome`;
`reads_memories = False` says it never reads `context.memories`, so none are retrieved for it (one that says
nothing is given them, as a model is).
The module is found as any import is (installed, or on PYTHONPATH), and in the current directory.
`CheckedPolicy` holds each one to that contract: a policy with no name, or one that cannot be made, stops
the run before its first step, and an answer that is no `DecisionOutcome`, or an action not available,
stops it at once (exit code 2, one line); a message to someone not on the team goes to all, with a note,
as a model's does.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace

from explorer.policies.replies import addressed
from explorer.records.errors import ConfigError
from nodes.decision_context import DecisionContext
from nodes.interfaces import Decision, DecisionOutcome, DecisionPolicy, StopRun

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


def make_plugin(model: str, setup: PolicySetup) -> CheckedPolicy:
    """The policy `model` names, made for one agent; ConfigError, one line, where making it fails."""
    policy_class = load_plugin(model)
    try:
        policy = policy_class(setup)
    except Exception as error:  # the user's constructor
        detail = " ".join(str(error).split())  # one line
        raise ConfigError(f"--model {model}: making the policy failed: {type(error).__name__}: {detail}") from None
    return CheckedPolicy(policy, model)


class CheckedPolicy:
    """A plug-in's policy, held to the DecisionPolicy contract (see the module's docstring)."""

    def __init__(self, policy: DecisionPolicy, model: str) -> None:
        name = getattr(policy, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"--model {model}: the policy has no `name` (a string; see explorer/api.py)")
        reads_memories = getattr(policy, "reads_memories", True)  # saying nothing, it is given them
        if not isinstance(reads_memories, bool):
            raise ConfigError(
                f"--model {model}: the policy's `reads_memories` is not True or False (see explorer/api.py)"
            )
        self.name, self.model, self._policy, self.reads_memories = name, model, policy, reads_memories

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        outcome = self._policy.decide(prompt, context)
        problem = _broken_contract(outcome, context.available_actions)
        if problem:
            raise StopRun(f"--model {self.model}: decide {problem} (see explorer/api.py)", users_mistake=True)
        if outcome.decision is None:
            return outcome
        decision, notes = addressed(outcome.decision, context)
        return replace(outcome, decision=decision, notes=(*outcome.notes, *notes))


def _broken_contract(outcome: object, available_actions: Sequence[str]) -> str | None:
    """What is wrong with a plug-in's answer, as "returned ...", or None."""
    if not isinstance(outcome, DecisionOutcome):
        return f"returned {type(outcome).__name__}, not a DecisionOutcome"
    decision = outcome.decision
    if decision is None:
        return None
    if not isinstance(decision, Decision):
        return f"returned a DecisionOutcome whose decision is a {type(decision).__name__}, not a Decision or None"
    not_text = [f.name for f in fields(decision) if not isinstance(getattr(decision, f.name), str)]
    if not_text:
        return f"returned a Decision whose {', '.join(not_text)} is not a string"
    if decision.action not in available_actions:
        return f"returned the action {decision.action[:40]!r}, not one of {', '.join(available_actions)}"
    return None
