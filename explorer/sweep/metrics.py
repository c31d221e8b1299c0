"""The figures a sweep compares, and the one it leads with: each run's task decides.

A coverage run is measured by what it found and saw (`METRICS`), and by the steps and the distance (cells the
team moved) it took to see a share of the cells. A search run (a task of targets to find) is measured first by
whether it found every target: a sweep of search runs leads with `success`, the share of runs that found them
all, then the steps to all of them over the runs that did, the steps to each target, and SPL.
A sweep file's `metric:` names the figure to lead with instead. The console, sweep.html, conditions.csv and
the paired differences all lead with it.
"""

from __future__ import annotations

from explorer.sweep.compare import CELLS, OBJECTS, SHARE, STEPS, Metric, RunRow

# Per run, from its summary.json; the page and conditions.csv compare these over conditions.
METRICS = (
    Metric("objects_found", "objects found", OBJECTS),
    Metric("object_coverage", "share of the objects found", SHARE),
    Metric("steps_to_50_objects", "steps to 50% of the objects", STEPS, aliases=("steps_to_50",)),
    Metric("steps_to_90_objects", "steps to 90% of the objects", STEPS, aliases=("steps_to_90",)),
    Metric("seconds_to_90_objects", "simulated seconds to 90% of the objects", aliases=("seconds_to_90",)),
    Metric("steps_to_100_objects", "steps to all the objects", STEPS, aliases=("steps_to_100",)),
    Metric("cells_seen", "cells seen", CELLS),
    Metric("cell_coverage", "share of the cells seen", SHARE),
    Metric("steps_to_50_cells", "steps to 50% of the cells", STEPS),
    Metric("steps_to_90_cells", "steps to 90% of the cells", STEPS),
    Metric("steps_to_99_cells", "steps to 99% of the cells", STEPS),
    Metric("distance", "distance travelled by the team (cells moved)"),
    Metric("distance_to_50_cells", "team's cells moved to 50% of the cells"),
    Metric("distance_to_90_cells", "team's cells moved to 90% of the cells"),
    Metric("distance_to_99_cells", "team's cells moved to 99% of the cells"),
    Metric("overlap_ratio", "overlap (cells seen twice or more / seen)", SHARE),
    Metric("messages_per_agent_step", "messages per agent-step"),
    Metric("messages_read_per_agent_step", "messages read per agent-step"),
    Metric("message_chars_read_per_agent_step", "message characters read per agent-step"),
    Metric("model_calls", "model calls"),
    Metric("prompt_tokens", "prompt tokens"),
    Metric("completion_tokens", "completion tokens"),
    Metric("cost_usd", "cost (USD)"),
    Metric("parse_failures", "parse failures"),
    Metric("errors", "errors"),
    Metric("wall_seconds", "wall time (s)"),
)
# A search task's figures. A run that did not find every target has no steps to all: that figure counts only
# the runs that did, and says how many (n=k/m), while success counts every finished run.
SUCCESS = Metric(
    "success", "success (share of runs that found every target)", SHARE, proportion=True, column="all_found"
)
STEPS_TO_ALL = Metric("steps_to_all", "steps to every target (the runs that found them all)", STEPS)
SEARCH_METRICS = (SUCCESS, STEPS_TO_ALL)  # what a search sweep leads with, in the short tables too
# Success weighted by path length (summary.json's search.spl): a run that did not find every target counts 0.
SPL = Metric("spl", "SPL (success weighted by path length)", SHARE)


def target_metric(target: str) -> Metric:
    """The steps to one target: the step it was first found at, over the runs that found it."""
    return Metric(f"steps_to_{target}", f"steps to the {target}", STEPS)


def headline_name(given: str) -> str | None:
    """The metric a sweep file's `metric:` names, by its name or an alias (steps_to_90); None: no such metric."""
    return next((m.name for m in (*SEARCH_METRICS, SPL, *METRICS) if given in (m.name, *m.aliases)), None)


def headline_names() -> list[str]:
    """The names a sweep file's `metric:` may give, for the line that refuses another."""
    return [name for m in (*SEARCH_METRICS, SPL, *METRICS) for name in (m.name, *m.aliases)]


def sweep_metrics(rows: list[RunRow], headline: str | None) -> tuple[Metric, ...]:
    """The sweep's metrics, its headline first: the one named (see `headline_name`), else success where every
    run that ran had a search task, else objects found. Where any run searched, the search figures come next,
    with the steps to each target, in the order the runs give them, then SPL."""
    targets = list(dict.fromkeys(target for row in rows for target in row.targets))
    metrics = (*SEARCH_METRICS, *map(target_metric, targets), SPL, *METRICS) if targets else (*METRICS,)
    ran = [row for row in rows if row.metrics]
    if headline is None:
        headline = SUCCESS.name if ran and all(row.targets for row in ran) else METRICS[0].name
    lead = next(m for m in (*metrics, *SEARCH_METRICS, SPL) if m.name == headline)
    return (lead, *(m for m in metrics if m.name != lead.name))


def leading(metrics: tuple[Metric, ...], shown: tuple[str, ...]) -> list[str]:
    """The metrics a short table shows, by name: the headline, the search figures where the sweep has them,
    then `shown`, each once."""
    names = [m.name for m in metrics]
    return list(dict.fromkeys([names[0], *(m.name for m in SEARCH_METRICS if m.name in names), *shown]))
