"""A sweep file: the conditions `python main.py --sweep FILE.yaml` runs, every run checked.

    out: runs/sweep-comm        # optional: the sweep directory (default runs/sweep-<file stem>), from here
    grid:                       # every combination runs; keys are main.py's run options, `-` or `_` alike
      world: [apartment, office]
      comm: [true, false]       # false: --no-comm
      seed: [1, 2, 3]
    fixed:                      # optional: the same for every run
      agents: 2
      steps: 30
      random-starts: true       # the seed places the agents: without it, apartment's runs would repeat
    baseline: {comm: true}      # optional: each condition's paired differences against this one's runs
    metric: steps_to_90         # optional: the figure the tables lead with (default: success for search runs)
    track: mlflow               # optional: log each run to MLflow, as --track mlflow does
    executor: ray               # optional: each run a task on a Ray cluster (default local: processes here)
    replicates: [seed]          # optional: the grid's keys whose values repeat a condition (default [seed])

Or named conditions instead of the grid's full product, each a mapping of run options, crossed with the
grid when there is one (its seeds, say):

    conditions:
      - {name: offline}
      - {name: no-comm, comm: false}
      - {name: random, model: random, comm: false}
    grid: {seed: [1, 2, 3]}
    baseline: offline           # a condition's name

A run's name, its directory in the sweep's, holds its condition's name and grid values:
`condition=no-comm,seed=1`, or `world=office,comm=false,seed=1`. A condition is a run's name but the
replicates' values (`replicates:`, the seed unless it names others); they repeat it: with
`replicates: [seed, world-seed]` a condition's runs are its seeds on each of its layouts. The baseline names
values of the grid's options (`{comm: true}`), or a condition (its name, or `{condition: NAME}`): each
condition is paired with the condition that has those values and the same others (the same world, say), run
by run on the replicates both have. Every run's arguments are checked as main.py checks them, and its world
and profiles files read, before any run starts. A sweep whose replicates would repeat one run exactly (a world
that gives every agent its start pose, and no decision that uses the seed) is refused: its
intervals would have no width.

A URL that carries credentials (`api_base: http://user:password@host/v1`, or `?api_key=...`) is passed to
its runs as given, and shown nowhere: a run's name holds a short hash of it, results.csv, the page and the
console the URL redacted with that hash beside it, and the page the file's text with the URL redacted.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import re
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from explorer.config.command_line import RunParser, config_from, run_options
from explorer.config.options import SECRET_URL, Option
from explorer.config.profiles import load_profiles
from explorer.config.run_config import RunConfig
from explorer.policies.built_in import seed_free
from explorer.records.errors import ConfigError
from explorer.records.secrets import MIN_SECRET_LENGTH, redact, redact_url
from explorer.sweep.metrics import headline_name, headline_names
from explorer.sweep.overrides import NO_OVERRIDES, Overrides, noted
from perception.families.generate import open_world
from perception.families.names import is_generated
from perception.targets import target_names
from perception.world import World
from perception.yaml_files import FileProblem, flow_text, kind, parse_mapping, read_yaml_text

SWEEP_KEYS = ("out", "grid", "conditions", "fixed", "baseline", "metric", "executor", "track", "replicates")
EXECUTORS = ("local", "ray")  # where the runs run: processes on this machine, or tasks on a Ray cluster
TRACKERS = ("mlflow",)  # what --track and `track:` name; each is installed by the `track` extra
COMM = "comm"  # true, false for --no-comm, or a topology (all, star, tree, none) for --comm
SEED = "seed"  # the grid's repetitions, unless `replicates:` names others
WORLD_SEED = "world-seed"  # a generated world's layout: a replicate key that changes every run
FIND = "find"
CONDITION = "condition"  # a named condition, in a run's name, its values and the baseline
# main.py's options that a sweep file may not set, and why: the ones that are not a run's, and --run-dir.
NOT_PER_RUN = {
    "run-dir": "each run's directory is in the sweep's: set `out`",
    "verbose": "the runs are quiet; each one's log is its run.log",
    "quiet": "the runs are always quiet",
    "help": "not a run option",
    "recover": "not a run option",
    "report": "not a run option",
    "sweep": "not a run option",
    "export-embedder": "not a run option",
    "parallel": "give --parallel on the command line",
    "dry-run": "give --dry-run on the command line",
    "track": "set `track` at the sweep file's top level, or give --track",
    "executor": "set `executor` at the top of the sweep file, or give --executor",
}
MAX_RUNS = 10_000  # far more than a day of runs on any machine: more is a typo in the grid
MAX_NAME_CHARS = 200  # a run directory's name; file systems allow 255 bytes
HASH_CHARS = 10  # of a secret value's hash: tells a grid's values apart, shows nothing of them
NAMES_IN_AN_ERROR = 3


Options = dict[str, tuple[str, Option]]  # main.py's run options by flag: (field name, Option)


class SweepError(FileProblem):
    """A sweep file that cannot be run; the message is one line naming the file."""


@dataclass(frozen=True)
class SweepRun:
    name: str  # its directory in the sweep's, from its condition's name and grid values: world=office,seed=1
    condition: str  # its condition's name and grid values but the replicates': what the replicates repeat
    values: dict[str, str]  # option -> value as results.csv shows it: its condition's name, the grid's, the fixed
    arguments: tuple[str, ...]  # main.py's, but --run-dir and -q
    settings: dict[str, Any]  # its RunConfig, as its config.json records it
    factors: dict[str, str] = field(default_factory=dict)  # what makes its condition, as `values` shows it
    world: str = ""  # its world, as the page groups the conditions
    replicate: tuple[str, ...] = ()  # its replicate keys' values, as `values` shows them: what pairs it with others
    inert: frozenset[str] = frozenset()  # the replicate keys that cannot change it: a seed with fixed start poses


@dataclass(frozen=True)
class NamedCondition:
    """One of the file's `conditions`: its name and its run options."""

    name: str
    options: dict[str, Any]


@dataclass(frozen=True)
class Sweep:
    """A sweep file, read once: a file edited or removed while the sweep runs changes nothing."""

    directory: Path
    runs: list[SweepRun]
    text: str  # the file as it was read, its secret URLs redacted: for the page
    baseline: dict[str, str] | None = None  # the factors a condition's baseline has: {"comm": "true"}, say
    metric: str | None = None  # the metric its tables lead with, as `metric:` names it; None: as the runs' task
    executor: str | None = None  # `executor:`, where it names one; --executor comes first
    track: str | None = None  # the tracker `track:` names, each run logged to it; None: none
    replicates: tuple[str, ...] = (SEED,)  # the grid's keys that repeat a condition, the outermost last
    overridden: tuple[str, ...] = ()  # what --set and --out changed, each as `steps: 80 (the file's: 30)`


def load_sweep(path: Path, overrides: Overrides = NO_OVERRIDES) -> Sweep:
    """The sweep directory, every run of the file at `path` with the command line's `overrides`, each checked,
    and its text; raises SweepError for the file, ConfigError for an override."""
    text = read_yaml_text(path, SweepError, "a sweep file")
    data = parse_mapping(text, path, SweepError)
    unknown = [str(key) for key in data if key not in SWEEP_KEYS]
    if unknown:
        raise SweepError(path, f"unknown key {unknown[0]!r} (allowed: {', '.join(SWEEP_KEYS)})")
    metric = _metric(path, data.get("metric"))
    executor = data.get("executor")
    if executor is not None and unknown_executor(executor):
        raise SweepError(path, f"executor: {unknown_executor(executor)}")
    track = data.get("track")
    if track is not None and track not in TRACKERS:
        raise SweepError(path, f"track: {_no_tracker(track)}")
    parser, options = RunParser(), run_options()
    conditions = _conditions(path, data.get("conditions"), options)
    grid = _grid(path, data.get("grid"), options, required=not conditions)
    in_file = _options(path, {} if data.get("fixed") is None else data["fixed"], "fixed", options)
    given = _set_options(overrides.values(), grid, conditions, options)  # --set's, each a fixed key
    fixed = _with_overrides(in_file, given, options)
    _check_one_place(path, grid, fixed, conditions, options)
    replicates = _replicates(path, data.get("replicates"), grid)
    _refuse_too_many(path, grid, conditions)
    checked: dict[Hashable, Any] = {}  # the worlds' start poses, and the (profiles, agents, model)'s models
    runs = [
        _run(path, named, dict(zip(grid, combination)), fixed, replicates, options, parser, checked)
        for named in _or_none(conditions)
        for combination in itertools.product(*grid.values())
    ]
    runs = _pooled_worlds(runs, replicates)
    names = [run.name for run in runs]
    clash = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if clash:
        raise SweepError(path, f"two runs would share the directory {clash!r}: make the grid's values differ")
    baseline = _baseline(path, data.get("baseline"), grid, conditions, replicates, options)
    _refuse_repeating_seeds(path, runs)
    directory, changes = _overridden_out(path, data.get("out"), overrides.out)
    changes = _set_changes(in_file, given, runs[0], options) + changes
    shown = _without_secrets(noted(text, changes), _secrets(grid, conditions, fixed, options))
    return Sweep(directory, runs, shown, baseline, metric, executor, track, replicates, overridden=changes)


def chosen_tracker(given: str | None, sweep: Sweep) -> str | None:
    """The tracker a sweep logs its runs to: --track's, else the file's `track`; None for none. A ConfigError,
    before anything runs, where --track names none or its package is not installed."""
    if given is not None and given not in TRACKERS:
        raise ConfigError(f"--track: {_no_tracker(given)}")
    track = given or sweep.track
    if track is not None and importlib.util.find_spec(track) is None:
        raise ConfigError(f"--track {track}: {track} is not installed: pip install 'multi-agent-explorer[track]'")
    return track


def _no_tracker(given: Any) -> str:
    return f"no tracker is named {given!r} (there is {', '.join(TRACKERS)})"


def _grid(path: Path, mapping: Any, options: Options, required: bool) -> dict[str, list[Any]]:
    """The grid's {option: [values]}; {} where there is none and named conditions make the runs."""
    if mapping is None and not required:
        return {}
    grid = _options(path, mapping, "grid", options, required=True)
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(path, f"grid: `{name}` must be a non-empty list of values, not {kind(values)}")
        texts = [value_text(value) for value in values]  # as the runs' names give them
        repeated = [text for i, text in enumerate(texts) if text in texts[:i]]
        if repeated:
            raise SweepError(path, f"grid: `{name}` lists {repeated[0]} twice")
    return grid


def _replicates(path: Path, given: Any, grid: dict[str, list[Any]]) -> tuple[str, ...]:
    """The keys `replicates:` names (`_` or `-` alike), each a key of the grid; (seed,) where it names none."""
    if given is None:
        return (SEED,)
    if not isinstance(given, list) or not given or not all(isinstance(key, str) for key in given):
        raise SweepError(path, f"`replicates` must be a non-empty list of the grid's keys, not {kind(given)}")
    keys = tuple(key.replace("_", "-") for key in given)
    for key in keys:
        if key not in grid:
            raise SweepError(path, f"replicates: `{key}` is not a key of the grid (they are {', '.join(grid)})")
    if len(set(keys)) < len(keys):
        raise SweepError(path, "replicates: a key is named twice")
    return keys


def _conditions(path: Path, listed: Any, options: Options) -> list[NamedCondition]:
    """The file's named conditions, in order; [] where it has none."""
    if listed is None:
        return []
    if not isinstance(listed, list) or not listed:
        raise SweepError(path, f"`conditions` must be a non-empty list of named run options, not {kind(listed)}")
    conditions: list[NamedCondition] = []
    for number, entry in enumerate(listed, start=1):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, (str, int)) or isinstance(name, bool) or not str(name).strip():
            raise SweepError(path, f"conditions: entry {number} must be a mapping with a `name` and run options")
        if any(condition.name == str(name) for condition in conditions):
            raise SweepError(path, f"conditions: two are named {str(name)!r}")
        rest = {key: value for key, value in entry.items() if key != "name"}
        conditions.append(NamedCondition(str(name), _options(path, rest, f"conditions: {name}", options)))
    return conditions


def _options(path, mapping, section, options, required=False):
    """The section's {option name: value}, its keys as main.py's flags name them (`_` or `-` alike)."""
    if mapping is None and required:
        raise SweepError(
            path, f"`{section}` is missing: the run options to vary, each with a list of values (or `conditions`)"
        )
    if not isinstance(mapping, dict) or (required and not mapping):
        raise SweepError(path, f"`{section}` must be a mapping of run options, not {kind(mapping)}")
    named: dict[str, Any] = {}
    for key, value in mapping.items():
        name, problem = _option_name(key, named, options)
        if problem:
            raise SweepError(path, f"{section}: {problem}")
        named[name] = value
    return named


def _option_name(key: Any, named: dict[str, Any], options: Options) -> tuple[str, str | None]:
    """The run option `key` names, as main.py's flag (`_` or `-` alike), and why it cannot be set beside the
    options `named` already (None where it can)."""
    name = str(key).replace("_", "-")
    if name in NOT_PER_RUN:
        return name, f"`{key}` cannot be set per run: {NOT_PER_RUN[name]}"
    if name not in options:
        return name, f"unknown run option `{key}` (the options of `python main.py --help`)"
    return name, f"`{key}` is given twice" if name in named else None


def _set_options(
    given: list[tuple[str, Any]], grid: dict[str, Any], conditions: list[NamedCondition], options: Options
) -> dict[str, Any]:
    """--set's {option name: value}; a ConfigError for a key that is no run option, or that the grid or a named
    condition sets: it would not be the same for every run, as a fixed key is."""
    named: dict[str, Any] = {}
    for key, value in given:
        name, problem = _option_name(key, named, options)
        if problem:
            raise ConfigError(f"--set: {problem}")
        setter = _setter(_dest(name, options), grid, conditions, options)
        if setter:
            raise ConfigError(f"--set: `{key}` is set by {setter}, not a fixed key: change it in the sweep file")
        named[name] = value
    return named


def _setter(dest: str, grid: dict[str, Any], conditions: list[NamedCondition], options: Options) -> str | None:
    """What in the sweep file sets the option `dest` per run: a grid axis, or a named condition; None if neither."""
    axis = next((name for name in grid if _dest(name, options) == dest), None)
    if axis:
        return f"the grid's axis `{axis}`"
    named = next((c for c in conditions if any(_dest(name, options) == dest for name in c.options)), None)
    return f"the condition {named.name!r}" if named else None


def _with_overrides(in_file: dict[str, Any], given: dict[str, Any], options: Options) -> dict[str, Any]:
    """The file's `fixed` with --set's options in place of its own for the same option (`no-comm` for `comm`)."""
    replaced = {_dest(name, options) for name in given}
    kept = {name: value for name, value in in_file.items() if name in given or _dest(name, options) not in replaced}
    return {**kept, **given}  # an option the file sets too keeps its place, as results.csv's columns


def _set_changes(in_file: dict[str, Any], given: dict[str, Any], run: SweepRun, options: Options) -> tuple[str, ...]:
    """Each --set option as every run has it, beside what the file gave it: `steps: 80 (the file's: 30)`."""
    return tuple(f"{name}: {run.values[name]} ({_before(name, in_file, options)})" for name in given)


def _before(name: str, in_file: dict[str, Any], options: Options) -> str:
    """What the file's `fixed` gave the setting that `name` sets: `the file's: 30`, `the file's comm: true`."""
    dest = _dest(name, options)
    found = next(((other, value) for other, value in in_file.items() if _dest(other, options) == dest), None)
    if found is None:
        return "not in the file"
    other, value = found
    shown = _shown(other, value, options) if isinstance(value, str) else flow_text(value)
    return f"the file's: {shown}" if other == name else f"the file's {other}: {shown}"


def _dest(name: str, options: Options) -> str:
    """The setting an option sets: `comm` and `no-comm` are one."""
    return options[name][0]


def _check_one_place(
    path: Path, grid: dict[str, Any], fixed: dict[str, Any], conditions: list[NamedCondition], options: Options
) -> None:
    """Each option is set once for a run: by the grid, its condition or fixed (comm and no-comm are one option)."""
    for named in conditions or [NamedCondition("", {})]:
        seen: dict[str, str] = {}  # the option's dest -> where it is set
        sections = (("grid", grid), (f"conditions: {named.name}", named.options), ("fixed", fixed))
        for section, mapping in sections:
            for name in mapping:
                dest = _dest(name, options)
                if dest in seen:
                    raise SweepError(path, f"{section}: `{name}` sets what {seen[dest]} already sets")
                seen[dest] = f"the grid's `{name}`" if section == "grid" else f"`{name}` in {section}"


def _refuse_too_many(path: Path, grid: dict[str, list[Any]], conditions: list[NamedCondition]) -> None:
    count = max(1, len(conditions))
    for values in grid.values():
        count *= len(values)
    if count > MAX_RUNS:
        raise SweepError(path, f"the sweep makes {count:,} runs, more than {MAX_RUNS:,}")


def _secrets(
    grid: dict[str, list[Any]], conditions: list[NamedCondition], fixed: dict[str, Any], options: Options
) -> list[str]:
    """The URLs with credentials that the grid, the conditions and the fixed options give: shown nowhere."""
    given = [*grid.items(), *((name, [value]) for named in conditions for name, value in named.options.items())]
    given += [(name, [value]) for name, value in fixed.items()]
    return [value for name, values in given for value in values if _secret(name, value, options)]


def _or_none(conditions: list[NamedCondition]) -> list[NamedCondition | None]:
    """The named conditions, or one run of the grid alone where there are none."""
    return [*conditions] if conditions else [None]


def _run(path, named, grid_values, fixed, replicates, options, parser, checked) -> SweepRun:
    """One run, of a named condition or none, with the grid's values: its arguments checked as main.py does."""
    grid_values = _find_as_text(path, grid_values)
    values = _find_as_text(path, {**(named.options if named else {}), **grid_values, **fixed})
    arguments = tuple(argument for name, value in values.items() for argument in _arguments(path, name, value, options))
    parts = [f"{CONDITION}={named.name}"] if named else []
    name = _directory_name(
        ",".join(parts + [f"{option}={_in_name(option, value, options)}" for option, value in grid_values.items()])
    )
    try:
        config = config_from(parser.parse_args(list(arguments)))
    except ConfigError as error:
        raise SweepError(path, f"run {name}: {error}") from None
    _check_files(config, checked)
    shown = {option: _shown(option, value, options) for option, value in values.items()}
    factors = {CONDITION: named.name} if named else {}
    factors.update((option, shown[option]) for option in grid_values if option not in replicates)
    condition = ", ".join(([named.name] if named else []) + [f"{o}={v}" for o, v in factors.items() if o != CONDITION])
    settings = json.loads(json.dumps(config.to_dict(), default=str))  # as config.json records them
    return SweepRun(
        name,
        condition or "all runs",
        {**({CONDITION: named.name} if named else {}), **shown},
        arguments,
        settings,
        factors,
        _world_label(
            str(config.episode.world), [] if config.episode.world_seed is None else [config.episode.world_seed]
        ),
        tuple(shown.get(key, "") for key in replicates),
        frozenset(key for key in replicates if _changes_nothing(key, config, checked)),
    )


def _find_as_text(path: Path, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with a `find` given as a list (`find: [toothbrush, laptop]`) as the text --find takes."""
    if FIND not in values:
        return values
    try:
        return {**values, FIND: ",".join(target_names(values[FIND]))}
    except ValueError as problem:
        raise SweepError(path, str(problem)) from None


def _arguments(path, name, value, options):
    """main.py's arguments that give option `name` the value `value`."""
    if name == COMM and isinstance(value, bool):  # comm: false, as --no-comm
        return [] if value else ["--no-comm"]
    if options[name][1].switch_off or options[name][1].switch_on:  # a flag: true or false
        if not isinstance(value, bool):
            raise SweepError(path, f"`{name}` must be true or false, not {value!r}")
        return [f"--{name}"] if value else []  # each switch its own flag: no-prior: true is --no-prior
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SweepError(path, f"`{name}` takes one value (text or a number), not {kind(value)} {value!r}")
    return [f"--{name}={value}"]  # `=`: a value that starts with '-' is not taken for an option


def value_text(value: object) -> str:
    """A value as a run's name and results.csv give it: true and false as the sweep file writes them."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _secret(name, value, options) -> bool:
    """True for a URL option's value that carries credentials: a user and password, or query values (api_key)."""
    secret_url = name in options and options[name][1].record is SECRET_URL
    return secret_url and isinstance(value, str) and redact_url(value) != value


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:HASH_CHARS]


def _in_name(name, value, options) -> str:
    """The value as the run's name gives it: a secret URL by its hash."""
    return _hash(value) if _secret(name, value, options) else value_text(value)


def _shown(name, value, options) -> str:
    """The value as results.csv, the page and the console show it: a secret URL redacted, its hash beside."""
    return f"{redact_url(value)} ({_hash(value)})" if _secret(name, value, options) else value_text(value)


def _without_secrets(text: str, urls: list[str]) -> str:
    """`text` with each of the secret `urls` redacted, and their credentials hidden wherever else they appear."""
    for url in sorted(set(urls), key=len, reverse=True):
        text = text.replace(url, redact_url(url))
    parts = {part for url in urls for part in _credentials(url) if len(part) >= MIN_SECRET_LENGTH}
    for part in sorted(parts, key=len, reverse=True):  # a URL written otherwise (quoted, escaped): its parts
        text = text.replace(part, "***")
    return redact(text)


def _credentials(url: str) -> list[str]:
    """The user name and password of `url`, and its query values, as written in it."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0]
    return [user, *user.split(":"), *(piece.partition("=")[2] for piece in parts.query.split("&"))]


def _directory_name(text):
    """`text` as a directory name on any file system: other characters become '_', a long one is cut."""
    name = re.sub(r"[^A-Za-z0-9._=,+-]", "_", text)
    if len(name) > MAX_NAME_CHARS:
        name = f"{name[: MAX_NAME_CHARS - 9]}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"
    return name


def _check_files(config, checked):
    """The world's and the profiles' contents, each once: a bad file is one line before anything runs."""
    world = (config.episode.world, config.episode.world_seed)
    if config.episode.mode == "mock" and world not in checked:
        checked[world] = _fixed_starts(open_world(*world))
    profiles = (config.team.profiles, config.team.agents, config.calls.model)
    if config.team.profiles is not None and profiles not in checked:
        checked[profiles] = [profile.model for profile in load_profiles(*profiles)]


def _fixed_starts(world: World) -> int:
    """How many agents the world places whatever the seed: none on a generated world (perception/starts.py)."""
    return 0 if world.starts_by_seed else len(world.agent_starts)


def _world_label(world: str, seeds: list[int]) -> str:
    """A world as the page names it: a shipped or file world by its name, a generated one as given, with the
    world seeds of the layouts it stands for: `gen:house (world seed 1)`, `gen:house (world seeds 1-5)`."""
    name = world if is_generated(world) else Path(world).stem
    if not seeds:
        return name
    if len(set(seeds)) == 1:
        return f"{name} (world seed {seeds[0]})"
    return f"{name} (world seeds {_spans(sorted(set(seeds)))})"


def _spans(numbers: list[int]) -> str:
    """Sorted numbers as ranges where consecutive: [1, 2, 3, 5, 7, 8] -> `1-3, 5, 7-8`."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][-1] + 1:
            spans[-1] = [spans[-1][0], number]
        else:
            spans.append([number])
    return ", ".join("-".join(str(end) for end in span) for span in spans)


def _pooled_worlds(runs: list[SweepRun], replicates: tuple[str, ...]) -> list[SweepRun]:
    """Where world seeds are replicates, each run's world names every layout its condition pools."""
    if WORLD_SEED not in replicates:
        return runs
    seeds: dict[str, list[int]] = {}
    for run in runs:
        if run.settings.get("world_seed") is not None:
            seeds.setdefault(run.condition, []).append(int(run.settings["world_seed"]))
    return [
        replace(run, world=_world_label(str(run.settings["world"]), seeds[run.condition]))
        if run.condition in seeds
        else run
        for run in runs
    ]


def _changes_nothing(key: str, config: RunConfig, checked: dict[Hashable, Any]) -> bool:
    """True where the replicate key cannot change the run: the seed as below, the world seed on a world that is
    read from a file. Any other key may change it."""
    if key == SEED:
        return _seed_changes_nothing(config, checked)
    return key == WORLD_SEED and not is_generated(str(config.episode.world))


def _seed_changes_nothing(config: RunConfig, checked: dict[Hashable, Any]) -> bool:
    """True where the seed cannot change the run: the world gives every agent its start pose and every decision
    is the built-in explorer's or coordinator's, on a schedule that does not depend on the wall clock."""
    if (
        config.episode.mode != "mock"
        or config.episode.random_starts
        or config.timing.schedule_kind.wall_clock
        or config.calls.replay_replies
    ):
        return False
    if checked[(config.episode.world, config.episode.world_seed)] < config.team.agents:
        return False  # the seed places the others
    models = (
        checked[(config.team.profiles, config.team.agents, config.calls.model)]
        if config.team.profiles
        else [config.calls.model]
    )
    return seed_free(list(models), config.team.coordinator)


def _refuse_repeating_seeds(path: Path, runs: list[SweepRun]) -> None:
    """Refuse, before anything runs, conditions whose replicates would repeat one run exactly: the runs would
    cost time and their intervals would have no width, claiming a certainty the sweep never measured."""
    seeds: dict[str, list[SweepRun]] = {}
    for run in runs:
        seeds.setdefault(run.condition, []).append(run)
    repeating = [c for c, rs in seeds.items() if len(rs) > 1 and all(_varying(rs) <= r.inert for r in rs)]
    if not repeating:
        return
    named = "; ".join(repeating[:NAMES_IN_AN_ERROR]) + ("; ..." if len(repeating) > NAMES_IN_AN_ERROR else "")
    # What to do comes before the names: a long message is cut at its end.
    raise SweepError(
        path,
        f"the seeds would repeat one run exactly in {len(repeating)} of {len(seeds)} conditions, since the world "
        "gives every agent its start pose and no decision uses the seed: add `random-starts: true`, run a "
        f"generated world (its seed places the team), or drop the seeds ({named})",
    )


def _varying(runs: list[SweepRun]) -> set[str]:
    """The replicate keys whose values differ among a condition's runs."""
    keys = dict.fromkeys(key for run in runs for key in run.values if key not in run.factors)
    return {key for key in keys if len({run.values.get(key) for run in runs}) > 1}


def _baseline(
    path: Path,
    given: Any,
    grid: dict[str, list[Any]],
    conditions: list[NamedCondition],
    replicates: tuple[str, ...],
    options: Options,
) -> dict[str, str] | None:
    """The factors of the baseline condition: a condition's name, or {option: value} of the grid's."""
    if given is None:
        return None
    if conditions and isinstance(given, (str, int)) and not isinstance(given, bool):
        given = {CONDITION: given}
    if not isinstance(given, dict) or not given:
        raise SweepError(
            path,
            f"`baseline` must name grid values, e.g. {{comm: true}}, or with `conditions` a condition's name, "
            f"not {kind(given)}",
        )
    names = [condition.name for condition in conditions]
    baseline = {}
    for key, value in given.items():
        name = str(key).replace("_", "-")
        if name == CONDITION and conditions:
            if str(value) not in names:
                raise SweepError(path, f"baseline: no condition is named {str(value)!r} (they are {', '.join(names)})")
            baseline[name] = str(value)
            continue
        if name in replicates or name not in grid:
            raise SweepError(path, f"baseline: `{key}` is not one of the grid's options (but the replicates)")
        if value_text(value) not in [value_text(v) for v in grid[name]]:
            raise SweepError(path, f"baseline: the grid's `{key}` has no value {value_text(value)}")
        baseline[name] = _shown(name, value, options)
    return baseline


def _metric(path: Path, given: Any) -> str | None:
    """The metric `metric:` names (steps_to_90 is steps_to_90_objects); None where it names none."""
    if given is None:
        return None
    name = headline_name(given) if isinstance(given, str) else None
    if name is None:
        raise SweepError(path, f"metric: no metric is named {given!r} (they are {', '.join(headline_names())})")
    return name


def unknown_executor(name: object) -> str | None:
    """Why `name` (the file's `executor:` or --executor) names no executor; None where it names one."""
    return None if name in EXECUTORS else f"no executor is named {name!r} (they are {', '.join(EXECUTORS)})"


def _overridden_out(path: Path, in_file: Any, given: Path | None) -> tuple[Path, tuple[str, ...]]:
    """The sweep directory: --out's where given, else the file's `out` (checked either way); and the change."""
    directory = _directory(path, in_file)
    if given is None:
        return directory, ()
    if given.exists() and not given.is_dir():
        raise ConfigError(f"--out {given}: that is a file; name the sweep's directory")
    return given, (f"out: {given} (the file's: {directory})",)


def _directory(path, out):
    if out is None:
        return Path("runs") / f"sweep-{Path(path).stem}"
    if not isinstance(out, str) or not out.strip():
        raise SweepError(path, f"`out` must be a directory's path, not {kind(out)} {out!r}")
    if Path(out).exists() and not Path(out).is_dir():
        raise SweepError(path, f"out: {out} is a file, not a directory")
    return Path(out)
