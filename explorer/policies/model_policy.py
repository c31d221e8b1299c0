"""A language model as the decision policy: the prompt, the reply read, one re-prompt if it is unusable."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from explorer.model.client import AuthenticationFailed, LLMError, Reply
from explorer.model.reply_format import OFF_SCHEMA
from explorer.model.schemas import JsonSchema, decision_schema
from explorer.policies.echoes import without_echoes
from explorer.policies.replies import ReplyError, addressed, parse_decision
from nodes.decision_context import DecisionContext, action_choice, render_prompt
from nodes.interfaces import Decision, DecisionOutcome
from nodes.record import ModelCall, excerpt
from prompts import JSON, YAML, how_to_reply, instruction_text, render

REPLY_ATTEMPTS = 2  # the reply, then one re-prompt that says what was wrong
REPLY_QUOTED_CHARS = 600  # of a bad reply, quoted back in the re-prompt

Ask = Callable[..., Reply]  # the model: a prompt in (and, where constrained, a JSON schema), its reply out
Syntax = Callable[[], str]  # the syntax the model's next prompt asks its reply in (prompts.JSON or YAML)
Extra = TypeVar("Extra")  # what a reply gives besides the decision (a goal's number, a coordinator's directives)


class ModelPolicy:
    """`ask(prompt) -> Reply` is the model: the model client with the agent's settings, or a test's stand-in.

    A `constrained` policy asks `ask(prompt, schema)`, with the JSON schema its reply must meet
    (explorer/model/schemas.py); the model client sends it where the agent's reply format has a dialect.
    `syntax()` says what its prompts ask the reply in: JSON while its requests go under a schema (the
    default for a constrained policy), else YAML.
    """

    reads_memories = True  # its prompt shows them

    def __init__(self, name: str, ask: Ask, constrained: bool = False, syntax: Syntax | None = None) -> None:
        self.name = name
        self.ask = ask
        self.constrained = constrained
        self.syntax: Syntax = syntax or (lambda: JSON if constrained else YAML)

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        """Never raises for a bad reply or a provider that stays down: the outcome says what happened. The
        prompt asked is the context's, with the reply instructions of the policy's syntax (`prompt` is the
        node's, in JSON's)."""
        actions = context.available_actions
        prompt = render_prompt(context, action_choice(context, self.syntax()))
        schema = decision_schema(actions, recipients(context))
        outcome, _ = self.ask_for(
            prompt, lambda text: (parse_decision(text, actions), None), action_choices(actions), context, schema
        )
        return outcome

    def ask_for(
        self,
        prompt: str,
        read: Callable[[str], tuple[Decision, Extra]],
        choices: str,
        context: DecisionContext | None = None,
        schema: JsonSchema | None = None,
    ) -> tuple[DecisionOutcome, Extra | None]:
        """(outcome, extra): the model's decision read by `read(text) -> (Decision, extra)`, which raises
        ReplyError for an unusable reply; `choices` is what the re-prompt lists. `context` is the explorer's
        whose message goes to the team (none for a coordinator, whose directives are sent otherwise);
        `schema` the JSON schema a constrained policy's reply must meet. The reply is read and checked
        the same either way: a schema constrains decoding, it does not vouch for the reply."""
        calls: list[ModelCall] = []  # each call once, with its reply, failed ones too
        request = prompt
        for _ in range(REPLY_ATTEMPTS):
            try:
                reply = self.ask(request, schema) if self.constrained and schema else self.ask(request)
            except AuthenticationFailed as refused:
                raise refused.stop_run() from None  # every later call would fail the same way
            except LLMError as failure:
                # Keep what earlier calls got, and what the failed call cost: they belong in the trace.
                failed = failure.record("decision")
                calls += [failed] if failed else []
                return DecisionOutcome(None, error=repr(failure), model_calls=tuple(calls), prompt=prompt), None
            try:
                if reply.off_schema:  # --reply-format json: a reply off its schema is not read at all
                    raise ReplyError(f"the reply is not {OFF_SCHEMA}")
                decision, extra = read(reply.text)
            except ReplyError as problem:
                calls.append(reply.record("decision", reply_error=str(problem)))
                request = prompt + "\n\n" + self._reprompt(problem, reply.text, choices)
                continue
            decision, echoed = without_echoes(decision, instruction_text(prompt))
            calls.append(replace(reply.record("decision"), echoed=echoed))
            notes: tuple[str, ...] = ()
            if context is not None:
                decision, notes = addressed(decision, context)
            return DecisionOutcome(decision, model_calls=tuple(calls), notes=notes, prompt=prompt), extra
        return DecisionOutcome(None, parse_failure=True, model_calls=tuple(calls), prompt=prompt), None

    def _reprompt(self, problem: ReplyError, reply: str, choices: str) -> str:
        quoted = excerpt(reply, REPLY_QUOTED_CHARS)
        return render("reprompt", problem=problem, reply=quoted, how=how_to_reply(self.syntax()), choices=choices)


def recipients(context: DecisionContext) -> list[str] | None:
    """Whom the agent may message (its teammates; "all" is added by the schema), or None with messages off."""
    team = context.team
    return [a for a in team.members if a != team.agent_id] if context.setup.comm_enabled else None


def action_choices(actions: Sequence[str]) -> str:
    return f"an `action` that is exactly one of: {', '.join(actions)}"
