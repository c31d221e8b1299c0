"""The figures a sweep compares, and the one it leads with: each run's task decides.

A coverage run is measured by what it found and saw (`METRICS`), and by the steps and the distance (cells the
team moved) it took to see a share of the cells. A search run (a task of targets to find) is measured first by
whether it found every target: a sweep of search runs leads with `success`, the share of runs that found them
all, then the steps to all of them, the steps to each target, and SPL.
A sweep file's `metric:` names the figure to lead with instead. The console, sweep.html, conditions.csv and
the paired differences all lead with it.

The steps (or distance) to get somewhere are times some runs never reach: each is a Kaplan–Meier median over
every run, a run that never got there censored at its last step (or its whole distance), so a condition that
fails more often does not look faster for it (`censored_at`). Each metric says which way is better where one
is (`better`), for the probability of improvement over the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.sweep.compare import CELLS, HIGHER, LOWER, OBJECTS, SHARE, STEPS, ConditionFigures, Metric, RunRow

LAST_STEP, DISTANCE = "steps_run", "distance"  # what a run that never got there is censored at


def _steps_to(name: str, label: str, aliases: tuple[str, ...] = ()) -> Metric:
    """The steps to get somewhere: a Kaplan–Meier median, a run that never got there censored at its last step."""
    return Metric(name, label, STEPS, aliases=aliases, censored_at=LAST_STEP, better=LOWER)


# Per run, from its summary.json; the page and conditions.csv compare these over conditions.
METRICS = (
    Metric("objects_found", "objects found", OBJECTS, better=HIGHER),
    Metric("object_coverage", "share of the objects found", SHARE, better=HIGHER),
    _steps_to("steps_to_50_objects", "steps to 50% of the objects", ("steps_to_50",)),
    _steps_to("steps_to_90_objects", "steps to 90% of the objects", ("steps_to_90",)),
    Metric(
        "seconds_to_90_objects", "simulated seconds to 90% of the objects", aliases=("seconds_to_90",), better=LOWER
    ),
    _steps_to("steps_to_100_objects", "steps to all the objects", ("steps_to_100",)),
    Metric("cells_seen", "cells seen", CELLS, better=HIGHER),
    Metric("cell_coverage", "share of the cells seen", SHARE, better=HIGHER),
    _steps_to("steps_to_50_cells", "steps to 50% of the cells"),
    _steps_to("steps_to_90_cells", "steps to 90% of the cells"),
    _steps_to("steps_to_99_cells", "steps to 99% of the cells"),
    Metric("distance", "distance travelled by the team (cells moved)"),
    *(
        Metric(
            f"distance_to_{share}_cells",
            f"team's cells moved to {share}% of the cells",
            censored_at=DISTANCE,
            better=LOWER,
        )
        for share in (50, 90, 99)
    ),
    Metric("overlap_ratio", "overlap (cells seen twice or more / seen)", SHARE, better=LOWER),
    Metric("messages_per_agent_step", "messages per agent-step"),
    Metric("messages_read_per_agent_step", "messages read per agent-step"),
    Metric("message_chars_read_per_agent_step", "message characters read per agent-step"),
    Metric("model_calls", "model calls", better=LOWER),
    Metric("prompt_tokens", "prompt tokens", better=LOWER),
    Metric("completion_tokens", "completion tokens", better=LOWER),
    Metric("cost_usd", "cost (USD)", better=LOWER),
    Metric("parse_failures", "parse failures", better=LOWER),
    Metric("errors", "errors", better=LOWER),
    Metric("wall_seconds", "wall time (s)", better=LOWER),
)
# A search task's figures. Success counts every finished run; so do the steps to all the targets, a run that
# did not find them all censored at its last step. The mean of the successes alone stays, named as such.
SUCCESS = Metric(
    "success",
    "success (share of runs that found every target)",
    SHARE,
    proportion=True,
    column="all_found",
    better=HIGHER,
)
STEPS_TO_ALL = _steps_to("steps_to_all", "steps to every target (Kaplan–Meier median, failures censored)")
STEPS_TO_ALL_OF_SUCCESSES = Metric(
    "steps_to_all_mean_of_successes",
    "mean steps to every target, of the runs that found them all",
    STEPS,
    column="steps_to_all",
    better=LOWER,
)
SEARCH_METRICS = (SUCCESS, STEPS_TO_ALL)  # what a search sweep leads with, in the short tables too
# Success weighted by path length (summary.json's search.spl): a run that did not find every target counts 0.
SPL = Metric("spl", "SPL (success weighted by path length)", SHARE, better=HIGHER)


def target_metric(target: str) -> Metric:
    """The steps to one target: the step it was first found at, a run that never found it censored."""
    return _steps_to(f"steps_to_{target}", f"steps to the {target}")


# The metrics a sweep file's `metric:` may name, in the order the line that refuses another gives them.
_NAMED = (*SEARCH_METRICS, STEPS_TO_ALL_OF_SUCCESSES, SPL, *METRICS)


def headline_name(given: str) -> str | None:
    """The metric a sweep file's `metric:` names, by its name or an alias (steps_to_90); None: no such metric."""
    return next((m.name for m in _NAMED if given in (m.name, *m.aliases)), None)


def headline_names() -> list[str]:
    """The names a sweep file's `metric:` may give, for the line that refuses another."""
    return [name for m in _NAMED for name in (m.name, *m.aliases)]


def sweep_metrics(rows: list[RunRow], headline: str | None) -> tuple[Metric, ...]:
    """The sweep's metrics, its headline first: the one named (see `headline_name`), else success where every
    run that ran had a search task, else objects found. Where any run searched, the search figures come next,
    with the steps to each target, in the order the runs give them, then SPL."""
    targets = list(dict.fromkeys(target for row in rows for target in row.targets))
    searched = (*SEARCH_METRICS, STEPS_TO_ALL_OF_SUCCESSES, *map(target_metric, targets), SPL)
    metrics = (*searched, *METRICS) if targets else (*METRICS,)
    ran = [row for row in rows if row.metrics]
    if headline is None:
        headline = SUCCESS.name if ran and all(row.targets for row in ran) else METRICS[0].name
    lead = next(m for m in (*metrics, *_NAMED) if m.name == headline)
    return (lead, *(m for m in metrics if m.name != lead.name))


def leading(
    metrics: tuple[Metric, ...], shown: tuple[str, ...], compared: Sequence[ConditionFigures] = ()
) -> list[str]:
    """The metrics a short table shows, by name: the headline, the search figures where the sweep has them,
    then those of `shown` that some condition of `compared` counts two runs or more in (a figure of one run
    says nothing of a condition), each once."""
    names = [m.name for m in metrics]
    first = [names[0], *(m.name for m in SEARCH_METRICS if m.name in names)]
    told = [name for name in shown if not compared or any(c.figures[name].n >= 2 for c in compared)]
    return list(dict.fromkeys([*first, *told]))
