"""A sweep file: the grid of run conditions `python main.py --sweep FILE.yaml` runs, every run checked.

    out: runs/sweep-comm        # optional: the sweep directory (default runs/sweep-<file stem>), from here
    grid:                       # every combination runs; keys are main.py's run options, `-` or `_` alike
      world: [apartment, office]
      comm: [true, false]       # false: --no-comm
      seed: [1, 2, 3]
    fixed:                      # optional: the same for every run
      agents: 2
      steps: 30

A run's name, its directory in the sweep's, holds its grid values: `world=office,comm=false,seed=1`.
A condition is a run's grid values but the seed; the seeds repeat it. Every run's arguments are checked
as main.py checks them, and its world and profiles files read, before any run starts.

A URL that carries credentials (`api_base: http://user:password@host/v1`, or `?api_key=...`) is passed to
its runs as given, and shown nowhere: a run's name holds a short hash of it, results.csv, the page and the
console the URL redacted with that hash beside it, and the page the file's text with the URL redacted.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from explorer.config.command_line import RunParser, config_from, run_options
from explorer.config.options import SECRET_URL
from explorer.config.profiles import load_profiles
from explorer.config.run_config import ConfigError
from explorer.config.secrets import MIN_SECRET_LENGTH, redact, redact_url
from perception.families.generate import open_world
from perception.yaml_files import FileProblem, kind, parse_mapping, read_yaml_text

SWEEP_KEYS = ("out", "grid", "fixed")
COMM = "comm"  # the sweep file's own option: true, or false for --no-comm
SEED = "seed"  # the grid's repetitions
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
}
MAX_RUNS = 10_000  # far more than a day of runs on any machine: more is a typo in the grid
MAX_NAME_CHARS = 200  # a run directory's name; file systems allow 255 bytes
HASH_CHARS = 10  # of a secret value's hash: tells a grid's values apart, shows nothing of them


class SweepError(FileProblem):
    """A sweep file that cannot be run; the message is one line naming the file."""


@dataclass(frozen=True)
class SweepRun:
    name: str  # its directory in the sweep's, from its grid values: world=office,comm=false,seed=1
    condition: str  # its grid values but the seed: what the seeds repeat
    values: dict[str, str]  # option -> value as results.csv shows it, the grid's then the fixed ones
    arguments: tuple[str, ...]  # main.py's, but --run-dir and -q
    settings: dict[str, Any]  # its RunConfig, as its config.json records it


@dataclass(frozen=True)
class Sweep:
    """A sweep file, read once: a file edited or removed while the sweep runs changes nothing."""

    directory: Path
    runs: list[SweepRun]
    text: str  # the file as it was read, its secret URLs redacted: for the page


def load_sweep(path: Path) -> Sweep:
    """The sweep directory, every run of the file at `path`, each checked, and its text; raises SweepError."""
    text = read_yaml_text(path, SweepError, "a sweep file")
    data = parse_mapping(text, path, SweepError)
    unknown = [str(key) for key in data if key not in SWEEP_KEYS]
    if unknown:
        raise SweepError(path, f"unknown key {unknown[0]!r} (allowed: {', '.join(SWEEP_KEYS)})")
    parser, options = RunParser(), run_options()
    grid = _options(path, data.get("grid"), "grid", options, required=True)
    fixed = _options(path, {} if data.get("fixed") is None else data["fixed"], "fixed", options)
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(path, f"grid: `{name}` must be a non-empty list of values, not {kind(values)}")
        texts = [value_text(value) for value in values]  # as the runs' names give them
        repeated = [text for i, text in enumerate(texts) if text in texts[:i]]
        if repeated:
            raise SweepError(path, f"grid: `{name}` lists {repeated[0]} twice")
    _check_one_place(path, grid, fixed, options)
    count = 1
    for values in grid.values():
        count *= len(values)
    if count > MAX_RUNS:
        raise SweepError(path, f"the grid makes {count:,} runs, more than {MAX_RUNS:,}")
    checked: set[Hashable] = set()  # the worlds, and the (profiles, agents, model), already loaded
    runs = [
        _run(path, dict(zip(grid, combination)), fixed, options, parser, checked)
        for combination in itertools.product(*grid.values())
    ]
    names = [run.name for run in runs]
    clash = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if clash:
        raise SweepError(path, f"two runs would share the directory {clash!r}: make the grid's values differ")
    secrets = [value for name, values in grid.items() for value in values if _secret(name, value, options)]
    secrets += [value for name, value in fixed.items() if _secret(name, value, options)]
    return Sweep(_directory(path, data.get("out")), runs, _without_secrets(text, secrets))


def _options(path, mapping, section, options, required=False):
    """The section's {option name: value}, its keys as main.py's flags name them (`_` or `-` alike)."""
    if mapping is None and required:
        raise SweepError(path, f"`{section}` is missing: the run options to vary, each with a list of values")
    if not isinstance(mapping, dict) or (required and not mapping):
        raise SweepError(path, f"`{section}` must be a mapping of run options, not {kind(mapping)}")
    named = {}
    for key, value in mapping.items():
        name = str(key).replace("_", "-")
        if name in NOT_PER_RUN:
            raise SweepError(path, f"{section}: `{key}` cannot be set per run: {NOT_PER_RUN[name]}")
        if name != COMM and name not in options:
            raise SweepError(path, f"{section}: unknown run option `{key}` (the options of `python main.py --help`)")
        if name in named:
            raise SweepError(path, f"{section}: `{key}` is given twice")
        named[name] = value
    return named


def _check_one_place(path, grid, fixed, options):
    """Each option is set once: in the grid or in fixed (comm and no-comm are one option)."""
    seen: dict[str, str] = {}  # the option's dest -> where it is set
    for section, mapping in (("grid", grid), ("fixed", fixed)):
        for name in mapping:
            dest = "comm" if name == COMM else options[name][0]
            if dest in seen:
                raise SweepError(path, f"{section}: `{name}` sets what {seen[dest]} already sets")
            seen[dest] = f"`{name}` in {section}" if section == "fixed" else f"the grid's `{name}`"


def _run(path, grid_values, fixed, options, parser, checked) -> SweepRun:
    """One run of the grid, its arguments checked as main.py checks them."""
    values = {**grid_values, **fixed}
    arguments = tuple(argument for name, value in values.items() for argument in _arguments(path, name, value, options))
    name = _directory_name(
        ",".join(f"{option}={_in_name(option, value, options)}" for option, value in grid_values.items())
    )
    try:
        config = config_from(parser.parse_args(list(arguments)))
    except ConfigError as error:
        raise SweepError(path, f"run {name}: {error}") from None
    _check_files(config, checked)
    shown = {option: _shown(option, value, options) for option, value in values.items()}
    condition = ", ".join(f"{option}={shown[option]}" for option in grid_values if option != SEED)
    settings = json.loads(json.dumps(config.to_dict(), default=str))  # as config.json records them
    return SweepRun(name, condition or "all runs", shown, arguments, settings)


def _arguments(path, name, value, options):
    """main.py's arguments that give option `name` the value `value`."""
    if name == COMM or options[name][1].switch_off:  # a flag: true or false
        if not isinstance(value, bool):
            raise SweepError(path, f"`{name}` must be true or false, not {value!r}")
        return ["--no-comm"] if (name == COMM) != value else []
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
    world = (config.world, config.world_seed)
    if config.mode == "mock" and world not in checked:
        open_world(*world)
        checked.add(world)
    profiles = (config.profiles, config.agents, config.model)
    if config.profiles is not None and profiles not in checked:
        load_profiles(*profiles)
        checked.add(profiles)


def _directory(path, out):
    if out is None:
        return Path("runs") / f"sweep-{Path(path).stem}"
    if not isinstance(out, str) or not out.strip():
        raise SweepError(path, f"`out` must be a directory's path, not {kind(out)} {out!r}")
    if Path(out).exists() and not Path(out).is_dir():
        raise SweepError(path, f"out: {out} is a file, not a directory")
    return Path(out)
