"""A language model as the decision policy: the prompt, the reply read, one re-prompt if it is unusable."""

from __future__ import annotations

from dataclasses import replace

from explorer.model.client import AuthenticationFailed, LLMError
from explorer.model.reading import excerpt
from explorer.policies.replies import ReplyError, parse_decision, resolve_recipient
from nodes.interfaces import DecisionOutcome
from prompts import render

REPLY_ATTEMPTS = 2  # the reply, then one re-prompt that says what was wrong
REPLY_KEPT_CHARS = 4_000  # of each reply, in the trace (with its full length)
REPLY_QUOTED_CHARS = 600  # of a bad reply, quoted back in the re-prompt


class ModelPolicy:
    """`ask(prompt) -> Reply` is the model: the model client with the agent's settings, or a test's stand-in."""

    def __init__(self, name, ask):
        self.name = name
        self.ask = ask

    def decide(self, prompt, context):
        """Never raises for a bad reply or a provider that stays down: the outcome says what happened."""
        outcome, _ = self.ask_for(prompt, context, lambda text: (parse_decision(text, context["available_actions"]), None))
        return outcome

    def ask_for(self, prompt, context, read, choices=None):
        """(outcome, extra): the model's decision read by `read(text) -> (Decision, extra)`, which raises
        ReplyError for an unusable reply; `choices` is what the re-prompt lists (the actions by default)."""
        attempts, calls = [], []
        request = prompt
        for _ in range(REPLY_ATTEMPTS):
            try:
                reply = self.ask(request)
            except AuthenticationFailed as refused:
                raise refused.stop_run() from None  # every later call would fail the same way
            except LLMError as failure:
                # Keep what earlier attempts got, and what the failed call cost: they belong in the trace.
                failed = failure.accounting("decision")
                calls += [failed] if failed else []
                return DecisionOutcome(None, tuple(attempts), error=repr(failure), model_calls=tuple(calls), prompt=prompt), None
            calls.append(reply.accounting("decision"))
            try:
                decision, extra = read(reply.text)
            except ReplyError as problem:
                attempts.append(_attempt(reply.text, str(problem)))
                quoted = excerpt(reply.text, REPLY_QUOTED_CHARS)
                listed = choices or action_choices(context["available_actions"])
                request = prompt + "\n\n" + render("reprompt", problem=problem, reply=quoted, choices=listed)
                continue
            attempts.append(_attempt(reply.text, None))
            notes = ()
            if decision.message_to_others and context["comm_enabled"]:
                recipient, note = resolve_recipient(decision.message_to, context["agent_id"], context["team"])
                decision = replace(decision, message_to=recipient)
                notes = (note,) if note else ()
            return DecisionOutcome(decision, tuple(attempts), model_calls=tuple(calls), notes=notes, prompt=prompt), extra
        return DecisionOutcome(None, tuple(attempts), parse_failure=True, model_calls=tuple(calls), prompt=prompt), None


def action_choices(actions):
    return f"an `action` that is exactly one of: {', '.join(actions)}"


def _attempt(text, error):
    """What the trace keeps of one reply: once, bounded, with its full length."""
    return {"reply": excerpt(text, REPLY_KEPT_CHARS), "chars": len(text), "error": error}
