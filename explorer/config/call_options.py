"""The model's options: which model decides, at which level and in which reply format, on which server, within
which time and budgets, and what a step it leaves undecided does."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from explorer.config.options import PATH, SECRET_URL, Count, Dollars, NotBlank, OneOf, Seconds, ServerUrl, option
from explorer.model.budget import Limits
from explorer.model.reply_format import REPLY_FORMATS
from explorer.policies.built_in import model_help
from explorer.records.errors import ConfigError
from explorer.records.run_lock import run_in_use

GOALS = "goals"  # --decide goals: a goal the planner walks to
DECIDE_LEVELS = ("actions", GOALS)
OFFLINE_FALLBACK = "offline"  # the built-in explorer decides a step no model decided
FALLBACKS = ("scan", OFFLINE_FALLBACK)


@dataclass(frozen=True)
class CallOptions:
    """The policy that decides and how its model is called: server, reply format, time, budgets, fallback."""

    model: str = field(
        default="offline",
        metadata=option(
            "--model",
            model_help(),
            check=NotBlank(),
        ),
    )
    api_base: str | None = field(
        default=None,
        metadata=option(
            "--api-base",
            "base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1",
            check=ServerUrl(),
            record=SECRET_URL,
        ),
    )
    decide: str = field(
        default="actions",
        metadata=option(
            "--decide",
            "what a model chooses: each step's action (default), or a goal the planner walks to (mock mode)",
            check=OneOf(DECIDE_LEVELS, in_parser=True),
        ),
    )
    reply_format: str = field(
        default="auto",
        metadata=option(
            "--reply-format",
            "how a model is asked to reply: auto (default: under a JSON schema where the server takes one, "
            "else YAML), json (always under a schema), or yaml (no schema)",
            check=OneOf(REPLY_FORMATS, in_parser=True),
        ),
    )
    replay_replies: Path | None = field(
        default=None,
        metadata=option(
            "--replay-replies",
            "answer each model call with the reply recorded in an earlier run's trace, instead of calling the model",
            type=Path,
            metavar="RUN_DIR",
            record=PATH,
        ),
    )
    timeout: float = field(
        default=60.0,
        metadata=option(
            "--timeout",
            "seconds before a model call, or a plug-in's decide, is cut off (default %(default)g)",
            type=float,
            check=Seconds(),
        ),
    )
    preflight: bool = field(
        default=True,
        metadata=option(
            "--no-preflight",
            "skip the check before the run that asks each model for one token (so that a server or a model "
            "that is not there is refused at once, before the run directory is made)",
            switch_off=True,
        ),
    )
    max_concurrency: int = field(
        default=32,
        metadata=option(
            "--max-concurrency",
            "model calls in flight at once, over all agents (default %(default)s)",
            type=int,
            check=Count(1),
        ),
    )
    price_in: float | None = field(
        default=None,
        metadata=option(
            "--price-in",
            "dollars per million prompt tokens, for models litellm cannot price",
            type=float,
            check=Dollars(),
        ),
    )
    price_out: float | None = field(
        default=None,
        metadata=option(
            "--price-out",
            "dollars per million completion tokens, likewise",
            type=float,
            check=Dollars(),
        ),
    )
    max_cost: float | None = field(
        default=None,
        metadata=option(
            "--max-cost",
            "stop the run cleanly once its model calls have cost this many dollars",
            metavar="USD",
            type=float,
            check=Dollars(),
        ),
    )
    max_calls: int | None = field(
        default=None,
        metadata=option(
            "--max-calls",
            "stop the run cleanly once it has made this many model requests (retries included)",
            metavar="N",
            type=int,
            check=Count(1),
        ),
    )
    max_tokens: int | None = field(
        default=None,
        metadata=option(
            "--max-tokens",
            "stop the run cleanly once its model calls have used this many tokens (prompt and completion)",
            metavar="N",
            type=int,
            check=Count(1),
        ),
    )
    fallback: str = field(
        default="scan",
        metadata=option(
            "--fallback",
            "what a step with no usable model decision does: scan (default), or offline (the built-in "
            "explorer decides it, and the trace says so)",
            check=OneOf(FALLBACKS, in_parser=True),
        ),
    )

    def limits(self) -> Limits:
        """The run's budgets."""
        return Limits(self.max_cost, self.max_calls, self.max_tokens)

    def check(self) -> None:
        """A run to replay: there, and ended."""
        if self.replay_replies is not None and not (self.replay_replies / "trace.jsonl").is_file():
            raise ConfigError(f"--replay-replies: {self.replay_replies} holds no run (no trace.jsonl there)")
        if self.replay_replies is not None and run_in_use(self.replay_replies):
            raise ConfigError(
                f"--replay-replies: {self.replay_replies} is a run still going: replay it once it has ended"
            )
