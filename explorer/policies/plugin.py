"""A decision policy of the user's own: `--model package.module:Class` (or a profile's `model:`).

The class is imported by that path and called once per agent with a `PolicySetup`; what it makes meets the
`DecisionPolicy` protocol (nodes/interfaces.py): a `name`, and `decide(prompt, context) -> DecisionOutcome`;
`reads_memories = False` says it never reads `context.memories`, so none are retrieved for it (one that says
nothing is given them, as a model is).
The module is found as any import is (installed, or on PYTHONPATH), and in the current directory.
`CheckedPolicy` holds each one to that contract: a policy with no name, or one that cannot be made, stops
the run before its first step, and an answer that is no `DecisionOutcome`, or an action not available,
stops it at once (exit code 2, one line), as `model_calls` that are not `ModelCall`s of the right types
do; a message to someone not on the team goes to all, with a note, as a model's does. `decide` runs on a
thread the run can abandon: a call past --timeout fails that step (the agent scans, as when `decide`
raises), a stopping run does not wait for it, and a `decide` that exits or interrupts (SystemExit,
KeyboardInterrupt) stops the run as a failure (exit code 1, one line).
"""

from __future__ import annotations

import importlib
import math
import os
import re
import sys
import threading
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from functools import cache, partial

from explorer.model.deadline import Abandoned, PastDeadline, within_deadline
from explorer.policies.replies import addressed
from explorer.records.errors import ConfigError
from nodes.decision_context import DecisionContext
from nodes.interfaces import Decision, DecisionOutcome, DecisionPolicy, RunStopped, StopRun
from nodes.record import ModelCall

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


@dataclass(frozen=True)
class CallLimits:
    """How long a plug-in's `decide` may take (--timeout), and the run's switch that abandons it as it stops."""

    timeout: float
    cancelled: threading.Event


def make_plugin(model: str, setup: PolicySetup, limits: CallLimits) -> CheckedPolicy:
    """The policy `model` names, made for one agent; ConfigError, one line, where making it fails."""
    policy_class = load_plugin(model)
    try:
        policy = policy_class(setup)
    except Exception as error:  # the user's constructor
        detail = " ".join(str(error).split())  # one line
        raise ConfigError(f"--model {model}: making the policy failed: {type(error).__name__}: {detail}") from None
    return CheckedPolicy(policy, model, limits)


class CheckedPolicy:
    """A plug-in's policy, held to the DecisionPolicy contract (see the module's docstring)."""

    def __init__(self, policy: DecisionPolicy, model: str, limits: CallLimits) -> None:
        name = getattr(policy, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"--model {model}: the policy has no `name` (a string; see explorer/api.py)")
        reads_memories = getattr(policy, "reads_memories", True)  # saying nothing, it is given them
        if not isinstance(reads_memories, bool):
            raise ConfigError(
                f"--model {model}: the policy's `reads_memories` is not True or False (see explorer/api.py)"
            )
        self.name, self.model, self._policy, self._limits = name, model, policy, limits
        self.reads_memories = reads_memories
        self._deciding = threading.Lock()  # held by the call under way, which may be one abandoned at its deadline

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        team, limits = context.team, self._limits
        try:
            outcome = within_deadline(
                partial(self._decide_alone, prompt, context),
                limits.timeout,
                limits.cancelled,
                f"{team.agent_id}-decide",
            )
        except Abandoned:
            raise RunStopped() from None  # the run is stopping: this step is not committed
        except PastDeadline:
            return DecisionOutcome(
                None, error=f"decide gave no answer within --timeout {limits.timeout:g} s: abandoned"
            )
        except Exception:
            raise  # the agent scans for the step, with the error in the trace (nodes/decision.py)
        except BaseException as error:  # SystemExit, KeyboardInterrupt: not the policy's to end the run with
            detail = " ".join(repr(error).split())[:200]  # one line
            raise StopRun(
                f"--model {self.model}: decide raised {detail} at {team.agent_id}'s step {team.step}"
            ) from None
        return self._checked(outcome, context)

    def _decide_alone(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        """The policy's answer, one call at a time: a call abandoned at its deadline may still be running."""
        if not self._deciding.acquire(timeout=self._limits.timeout):
            raise PastDeadline("an earlier call past its deadline is still running")
        try:
            return self._policy.decide(prompt, context)
        finally:
            self._deciding.release()

    def _checked(self, outcome: DecisionOutcome, context: DecisionContext) -> DecisionOutcome:
        """The outcome held to the contract: StopRun where it breaks it, the message addressed to a teammate."""
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
    wrong_calls = _broken_calls(outcome.model_calls)
    if wrong_calls:
        return wrong_calls
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


def _broken_calls(calls: object) -> str | None:
    """What is wrong with a plug-in's `model_calls`, as "returned ...", or None: the run counts them."""
    if not isinstance(calls, (tuple, list)):
        return f"returned model_calls of type {type(calls).__name__}, not a tuple of ModelCall"
    for number, call in enumerate(calls, 1):
        if not isinstance(call, ModelCall):
            return f"returned model_calls whose item {number} is a {type(call).__name__}, not a ModelCall"
        for name, kinds in _call_fields().items():
            value = getattr(call, name)
            if not any(_is(value, kind) for kind in kinds):
                wanted = " or ".join(_WANTED[kind] for kind in kinds)
                return f"returned model_calls whose item {number} has {name} {repr(value)[:40]}, not {wanted}"
    return None


@cache
def _call_fields() -> dict[str, tuple[type, ...]]:
    """Each field of a ModelCall, with the types its annotation allows (`str | None`: str and NoneType)."""
    hints = typing.get_type_hints(ModelCall)
    return {f.name: _kinds(hints[f.name]) for f in fields(ModelCall)}


def _kinds(hint: typing.Any) -> tuple[type, ...]:
    """The types an annotation allows: a union's members; a tuple of names (`tuple[str, ...]`) is a tuple."""
    if typing.get_origin(hint) is tuple:
        return (tuple,)
    return typing.get_args(hint) or (hint,)


def _is(value: object, kind: type) -> bool:
    """`value` is of `kind`, as the run counts it: a number is 0 or more (and finite), no bool is a number."""
    if kind is int:
        return type(value) is int and value >= 0
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < math.inf
    if kind is tuple:
        return isinstance(value, tuple) and all(isinstance(item, str) for item in value)
    return type(value) is kind if kind in (bool, types.NoneType) else isinstance(value, kind)


_WANTED = {
    str: "text",
    int: "a whole number, 0 or more",
    float: "a number, 0 or more",
    bool: "True or False",
    types.NoneType: "None",
    tuple: "a tuple of texts",
}
