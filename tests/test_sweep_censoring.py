"""Statistics that count failures: a time some runs never reach is a Kaplan–Meier median, failures censored at
their last step; paired differences count a failure at its last step; a paired difference of shares has
Newcombe's interval; each condition has rliable's probability of improvement over its baseline."""

from __future__ import annotations

import csv
import math
import re

import pytest

from explorer.sweep.compare import RunRow, compare, figure_text, number_text
from explorer.sweep.metrics import METRICS, STEPS_TO_ALL, STEPS_TO_ALL_OF_SUCCESSES, SUCCESS
from explorer.sweep.results import write_conditions
from explorer.sweep.stats import paired_proportion_interval, probability_of_improvement
from explorer.sweep.survival import median_time
from tests.support.paths import ROOT

STEP_LIMIT = 30
SEARCH = (SUCCESS, STEPS_TO_ALL, STEPS_TO_ALL_OF_SUCCESSES)

# Freireich's 6-MP group (Gehan, 1965), weeks in remission; False: censored. Its Kaplan–Meier curve is the
# textbook's: 0.857 at 6, 0.807 at 7, 0.753 at 10, 0.690 at 13, 0.627 at 16, 0.538 at 22, 0.448 at 23.
WEEKS = [6, 6, 6, 6, 7, 9, 10, 10, 11, 13, 16, 17, 19, 20, 22, 23, 25, 32, 32, 34, 35]
RELAPSED = [bool(x) for x in (1, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0)]


def search_row(condition: str, seed: int, found_at: int | None, layout: int | None = None) -> RunRow:
    """A finished search run that found every target at `found_at`, or never (it ran to the step limit)."""
    metrics = {"all_found": found_at is not None, "steps_to_all": found_at, "steps_run": found_at or STEP_LIMIT}
    replicate = (seed,) if layout is None else (seed, layout)
    name = f"{condition},{replicate}"
    return RunRow(name, condition, "house", {"condition": condition}, replicate, "completed", metrics, [], ("laptop",))


def coordinator_and_plain() -> tuple[RunRow, ...]:
    """The issue's case: where the coordinator finds every target it is a step quicker than the plain team, but
    it fails on two seeds of four where the plain team does not."""
    plain = [search_row("plain", seed, at) for seed, at in enumerate((20, 22, 24, 18))]
    coordinator = [search_row("coordinator", seed, at) for seed, at in enumerate((19, 21, None, None))]
    return (*plain, *coordinator)


def log_log_lower(times: list[int], events: list[bool], at: float) -> float:
    """The lower end of S(at)'s 95% log-log band, from Greenwood's variance (Kalbfleisch and Prentice)."""
    survival, greenwood = 1.0, 0.0
    for time in sorted(set(times)):
        if time > at:
            break
        at_risk = sum(t >= time for t in times)
        died = sum(t == time and e for t, e in zip(times, events))
        if died:
            survival *= 1 - died / at_risk
            greenwood += died / (at_risk * (at_risk - died))
    spread = 1.959964 * math.sqrt(greenwood) / abs(math.log(survival))
    return survival ** math.exp(spread)  # S < 1: the larger power is the lower end


def test_the_kaplan_meier_median_of_a_textbook_sample_and_its_interval_from_the_band():
    median = median_time(WEEKS, RELAPSED)
    assert (median.n, median.censored, median.mean) == (21, 12, 23)  # S(22) = 0.538, S(23) = 0.448
    # The low end: the first time the band's lower curve is at 0.5 or below (13: 0.432; at 10 it is 0.503).
    assert log_log_lower(WEEKS, RELAPSED, 10) > 0.5 >= log_log_lower(WEEKS, RELAPSED, 13)
    assert median.low == 13
    # Its upper curve never gets there (0.68 after the last relapse): not reached, beyond the longest, 35.
    assert (median.high, median.beyond) == (None, 35)
    assert figure_text(median, 21) == "23 [13, > 35] (12 censored)"


def test_a_time_without_failures_and_one_never_reached():
    every = median_time([10, 12, 15], [True] * 3)
    assert (every.mean, every.low, every.high, every.censored, every.beyond) == (12, 10, 15, 0, None)
    assert figure_text(every, 3) == "12 [10, 15]"
    never = median_time([30, 30], [False, False])
    assert (never.n, never.mean, never.censored, never.beyond) == (2, None, 2, 30)
    assert figure_text(never, 2) == "> 30 (2 censored)"
    assert figure_text(median_time([30], [False]), 3) == "> 30 (n=1/3, 1 censored)"
    assert figure_text(median_time([], []), 2) == "- (n=0/2)"


def test_failures_censored_change_the_median_and_count_in_the_paired_difference():
    plain, coordinator = compare(list(coordinator_and_plain()), SEARCH, {"condition": "plain"})
    # The mean of the successes alone says 20 steps, and a step quicker than the plain team, pair by pair.
    successes = coordinator.figures[STEPS_TO_ALL_OF_SUCCESSES.name]
    assert (successes.n, successes.mean) == (2, 20)
    assert coordinator.differences[STEPS_TO_ALL_OF_SUCCESSES.name].mean == -1
    # Censored at its last step, each failure counts: the median is 21, over all four runs.
    median = coordinator.figures[STEPS_TO_ALL.name]
    assert (median.n, median.censored, median.mean, median.high) == (4, 2, 21, None)
    assert figure_text(median, 4) == "21 [19, > 30] (2 censored)"
    assert plain.figures[STEPS_TO_ALL.name].censored == 0
    # Paired, a failure counts at the step limit: (19-20, 21-22, 30-24, 30-18) / 4 = +4 steps, not -1.
    paired = coordinator.differences[STEPS_TO_ALL.name]
    assert (paired.n, paired.mean) == (4, 4)
    assert paired.low < paired.mean < paired.high


def test_censored_pairs_count_over_layouts_too():
    rows = [search_row("plain", seed, 20, layout) for seed in (1, 2) for layout in (1, 2)]
    rows += [search_row("prior", seed, 18 if layout == 1 else None, layout) for seed in (1, 2) for layout in (1, 2)]
    _, prior = compare(rows, SEARCH, {"condition": "plain"})
    paired = prior.differences[STEPS_TO_ALL.name]
    assert (paired.n, paired.mean) == (4, ((18 - 20) * 2 + (STEP_LIMIT - 20) * 2) / 4)
    assert prior.differences[STEPS_TO_ALL_OF_SUCCESSES.name].n == 2  # the successes alone: the two pairs


@pytest.mark.parametrize(
    ("table", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17, 2635-2650, its examples' method 10 limits, to 4 places.
        ((36, 12, 2, 0), 0.0569, 0.3404),
        ((18, 12, 2, 18), 0.0562, 0.3290),
        ((53, 0, 0, 1), -0.0729, 0.0729),
        ((0, 30, 0, 0), 0.8395, 1.0),
    ],
)
def test_newcombe_s_interval_for_paired_proportions_matches_his_examples(table, low, high):
    both, first, second, neither = table
    pairs = [(True, True)] * both + [(True, False)] * first + [(False, True)] * second + [(False, False)] * neither
    interval = paired_proportion_interval(pairs)
    assert (interval.n, interval.mean) == (sum(table), pytest.approx((first - second) / sum(table)))
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    # The other way round it is the same interval, negated.
    swapped = paired_proportion_interval([(b, a) for a, b in pairs])
    assert (swapped.mean, swapped.low, swapped.high) == pytest.approx((-interval.mean, -interval.high, -interval.low))


def test_newcombe_s_interval_is_wide_with_few_pairs_even_where_they_all_agree():
    for pairs in ([(True, True)] * 3, [(False, False)] * 2 + [(True, True)] * 2, [(True, False)] * 3):
        interval = paired_proportion_interval(pairs)
        assert -1 <= interval.low <= interval.mean <= interval.high <= 1
        assert interval.high - interval.low > 0.3
    assert paired_proportion_interval([]).mean is None


def test_success_differences_have_newcombe_s_interval_not_a_bootstrap_s_zero_width():
    rows = [search_row("plain", seed, 20) for seed in range(3)] + [search_row("prior", seed, 15) for seed in range(3)]
    _, prior = compare(rows, SEARCH, {"condition": "plain"})
    success = prior.differences[SUCCESS.name]
    assert (success.n, success.mean) == (3, 0)
    assert success.low < 0 < success.high  # every pair succeeded in both: a bootstrap would say [0, 0]
    assert success == paired_proportion_interval([(True, True)] * 3)


def test_the_probability_of_improvement_is_a_half_for_the_same_runs_and_one_where_every_run_wins():
    same = probability_of_improvement([([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])])
    assert same.mean == 0.5 and 0 <= same.low < 0.5 < same.high <= 1
    wins = probability_of_improvement([([5.0, 6.0], [1.0, 2.0]), ([9.0], [3.0, 4.0])])
    assert (wins.n, wins.mean, wins.low, wins.high) == (3, 1, 1, 1)
    # Per task, then the mean over tasks: one task won outright, one lost outright.
    assert probability_of_improvement([([5.0], [1.0]), ([1.0, 1.0], [2.0])]).mean == 0.5
    assert probability_of_improvement([([1.0], [])]).mean is None


def test_the_probability_of_improvement_knows_which_way_is_better():
    # The coordinator is quicker where it succeeds, but fails twice: fewer steps are better, success more.
    _, coordinator = compare(list(coordinator_and_plain()), SEARCH, {"condition": "plain"})
    improvement = coordinator.improvement
    assert improvement[SUCCESS.name].mean == pytest.approx((0 * 2 + 0.5 * 2) / 4 / 1)  # never above, tied twice
    # Steps: 19 beats 20, 22, 24 (not 18); 21 beats 22, 24; a failure at 30 beats none: 5 of 16.
    assert improvement[STEPS_TO_ALL.name].mean == pytest.approx(5 / 16)
    assert improvement[STEPS_TO_ALL_OF_SUCCESSES.name].mean == pytest.approx(5 / 8)
    messages = next(m for m in METRICS if m.name == "messages_per_agent_step")
    assert messages.better is None  # no way is better: no probability of improvement


def test_conditions_csv_gives_the_median_its_censored_runs_and_the_probability_of_improvement(tmp_path):
    compared = compare(list(coordinator_and_plain()), SEARCH, {"condition": "plain"})
    write_conditions(tmp_path / "conditions.csv", compared, SEARCH)
    with open(tmp_path / "conditions.csv", newline="", encoding="utf-8") as file:
        rows = {(row["condition"], row["metric"]): row for row in csv.DictReader(file)}
    median = rows[("coordinator", "steps_to_all")]
    assert (median["statistic"], median["n"], median["censored"], median["mean"], median["high"]) == (
        "km_median",
        "4",
        "2",
        "21.0",
        "",  # not reached
    )
    assert (median["difference"], median["probability_of_improvement"]) == ("4.0", "0.3125")
    successes = rows[("coordinator", "steps_to_all_mean_of_successes")]
    assert (successes["statistic"], successes["n"], successes["censored"], successes["mean"]) == (
        "mean",
        "2",
        "",
        "20.0",
    )
    success = rows[("coordinator", "success")]
    assert success["statistic"] == "share" and float(success["difference_low"]) < -0.5 < float(
        success["difference_high"]
    )
    assert rows[("plain", "steps_to_all")]["probability_of_improvement"] == ""  # the baseline itself


def test_the_docs_example_of_failures_is_what_the_sweep_prints():
    docs = (ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8")
    _, coordinator = compare(list(coordinator_and_plain()), SEARCH, {"condition": "plain"})
    for metric in (STEPS_TO_ALL_OF_SUCCESSES, STEPS_TO_ALL, SUCCESS):
        own = figure_text(coordinator.figures[metric.name], 4)
        paired = figure_text(coordinator.differences[metric.name], 4, signed=True)
        assert re.search(rf"^\| `{metric.name}`[^|]*\| `{re.escape(own)}` \| `{re.escape(paired)}` \|$", docs, re.M)
    improvement = coordinator.improvement
    shown = f"{number_text(improvement[SUCCESS.name].mean)} in success and {number_text(improvement[STEPS_TO_ALL.name].mean)}"
    assert shown in docs
    for agreeing, text in ((3, "0 [-0.561, +0.561]"), (15, "0 [-0.204, +0.204]")):
        assert figure_text(paired_proportion_interval([(True, True)] * agreeing), agreeing, signed=True) == text
        assert f"`{text}`" in docs
    three_more = paired_proportion_interval([(True, True)] * 12 + [(True, False)] * 3)
    assert f"`{figure_text(three_more, 15, signed=True)}`" in docs
