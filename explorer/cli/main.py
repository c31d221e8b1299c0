"""The command line: `python main.py --mode mock --agents 2`."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from explorer.cli.page_access import serve_address
from explorer.config.command_line import RunParser, config_from
from explorer.records.errors import ConfigError
from explorer.report.training_data import REACHED_SHARE
from explorer.run.signals import StopSignals

EXIT_USAGE, EXIT_FAILED, EXIT_INTERRUPTED = 2, 1, 130
# The collector's first threshold, for the program (not for a run called from Python, whose process is its
# caller's): an agent's map is many small objects that live for the run, and at the default (700
# allocations) the collector scanned them so often that it took a third of a 1,000-agent run's time.
COLLECT_AFTER = 100_000
EXIT_BUDGET = 3  # the run stopped cleanly when a budget (--max-cost, --max-calls, --max-tokens) ran out
# The options that go with --sweep only, and what each does there.
SWEEP_ONLY = {
    "--dry-run": "it lists a sweep's runs without running them",
    "--track": "it logs a sweep's runs",
    "--executor": "it says where the sweep's runs run",
    "--experiment": "it names the MLflow experiment a sweep's runs are logged to",
    "--set": "it sets a fixed option of every run of the sweep",
    "--pilot": "it runs K of the sweep's baseline runs, with --dry-run, to plan the rest",
}


# The actions that are no run: each does its work and exits.
ONE_SHOT_ACTIONS = ("--recover", "--report", "--sweep", "--export-world", "--export-sft", "--export-embedder")


def build_parser() -> RunParser:
    """The run options (RunConfig's), and the actions that are no run's."""
    parser = RunParser(
        prog="main.py",
        description="Several LLM agents explore a world together, each with its own PocketFlow loop.",
    )
    parser.add_argument(
        "--recover",
        type=Path,
        metavar="RUN_DIR",
        help="write the summary.json of a run that was killed, from its trace, and exit",
    )
    parser.add_argument("--report", type=Path, metavar="RUN_DIR", help="rebuild an earlier run's report.html and exit")
    parser.add_argument(
        "--sweep", type=Path, metavar="FILE", help="run the grid of conditions a sweep file gives, and exit"
    )
    parser.add_argument(
        "--out",
        type=_path_to_write("the JSONL file to write (--export-sft), or the sweep's directory (--sweep)"),
        metavar="FILE|DIR",
        help="with --export-sft: the JSONL file to write; with --sweep: the sweep's directory, instead of the "
        "sweep file's `out`",
    )
    parser.add_argument(
        "--export-world",
        type=_path_to_write("the file to write, such as house.yaml"),
        metavar="FILE",
        help="write the generated world --world gen:FAMILY and --world-seed make as a YAML world file, and exit",
    )
    _add_export_sft(parser)
    _add_sweep_options(parser)
    parser.add_argument(
        "--serve",
        type=serve_address,
        metavar="[HOST:]PORT",
        help="watch the run on a live web page at http://HOST:PORT/ (host 127.0.0.1 by default; port 0: a free one); "
        "after the run it serves the page and report.html until Ctrl-C",
    )
    parser.sections["embedding"].add_argument(
        "--export-embedder", action="store_true", help="make the ONNX export now, if it is not there yet, and exit"
    )
    volume = parser.add_mutually_exclusive_group()
    volume.add_argument("-v", "--verbose", action="store_true", help="log every agent-step")
    volume.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    return parser


def _add_sweep_options(parser: RunParser) -> None:
    """The options that go with --sweep."""
    parser.add_argument(
        "--parallel",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="with --sweep: runs at once (default: the number of cores)",
    )
    parser.add_argument(
        "--executor",
        metavar="NAME",
        help="with --sweep: local (the default: processes here) or ray (tasks on the Ray cluster RAY_ADDRESS names, "
        "else a local Ray); the sweep file's `executor:` otherwise",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="with --sweep: check every run, list the conditions and their runs (which are complete) and the "
        "analysis plan, run nothing",
    )
    parser.add_argument(
        "--pilot",
        type=int,
        metavar="K",
        help="with --sweep and --dry-run: first run K of the baseline's runs, kept in the sweep's out for it, and "
        "estimate from them the smallest difference the sweep can detect",
    )
    parser.add_argument(
        "--track",
        metavar="TRACKER",
        help="with --sweep: log each run to a tracker: mlflow (the store MLFLOW_TRACKING_URI names, else one in the "
        "sweep's out)",
    )
    parser.add_argument(
        "--experiment",
        metavar="NAME",
        help="with --sweep and --track mlflow (or the file's `track:`): the MLflow experiment to log to (default: "
        "the name of the sweep's out directory)",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="with --sweep: set an option of the sweep file's `fixed:` for every run, the value read as the file's "
        "would be (--set steps=80, --set find=[toothbrush,laptop]); again for another",
    )


def _add_export_sft(parser: RunParser) -> None:
    """--export-sft and what goes with it (explorer/report/training_data.py)."""
    sft = parser.add_argument_group("training data (docs/training-data.md)")
    sft.add_argument(
        "--export-sft",
        type=Path,
        nargs="+",
        metavar="RUN_DIR",
        help="write each decision of these runs as a chat example (JSON lines) to --out FILE, and exit",
    )
    sft.add_argument(
        "--only-found-new",
        action="store_true",
        help="with --export-sft: only the decisions whose goal (or action) found an object new to the team",
    )
    sft.add_argument(
        "--only-reached",
        action="store_true",
        help=f"with --export-sft: only the runs whose team found {REACHED_SHARE}%% of the objects",
    )


def _path_to_write(what: str) -> Callable[[str], Path]:
    """argparse's type of a path to write `what` at: '' is none (as a path it would name the current directory)."""

    def path(text: str) -> Path:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"give {what}")
        return Path(text)

    return path


def main(argv: Sequence[str] | None = None, started: float | None = None) -> int:
    """Returns the exit code; `started` is when the process started (perf_counter), for the start-up figures.

    Called with `argv` (from Python, not as the program), it leaves the signal handlers and the garbage
    collector as it found them.
    """
    signals = StopSignals().install()
    if argv is None:
        gc.set_threshold(COLLECT_AFTER, *gc.get_threshold()[1:])
    try:
        return _main(argv, started, signals)
    except KeyboardInterrupt:  # before the run started, or while it was being set up
        print("main.py: interrupted before the run started", file=sys.stderr)
        return signals.exit_code or EXIT_INTERRUPTED
    finally:
        if argv is not None:
            signals.restore()
        else:
            signals.ignore()


def _main(argv, started, signals):
    from perception.window import WindowError
    from perception.yaml_files import FileProblem  # worlds, profiles, key maps

    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
        _refuse_misplaced(args)
        _check_export_sft(args)
        config = None if _one_shot_action(args) else config_from(args, verbosity=_verbosity(args))
    except (ConfigError, FileProblem, WindowError) as error:  # before the run's modules are imported: at once
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return _act(args, config, started, signals)


def _act(args, config, started, signals):
    """Do what the parsed arguments ask: a one-shot action, or the run of `config`."""
    # Imported here, after the arguments are checked, so that --help and their errors answer at once.
    from explorer.records.trace import DiskWriteError
    from memory.vector_memory import MemoryFileError
    from perception.window import WindowError
    from perception.yaml_files import FileProblem

    try:
        return _one_shot(args) if config is None else _run(args, config, started, signals)
    except (ConfigError, FileProblem, WindowError, MemoryFileError) as error:
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except DiskWriteError as error:  # a rebuilt report, or a sweep's results, the disk refused
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_FAILED


def _one_shot_action(args) -> bool:
    return any(_given(args, flag) for flag in ONE_SHOT_ACTIONS)


def _one_shot(args):
    """The actions that are no run: each does its work and exits."""
    if args.export_sft is not None:
        return _export_sft(args)
    if args.recover is not None:
        return _recover(args.recover)
    if args.report is not None:
        return _report(args.report)
    if args.export_embedder:
        return _export_embedder(args.embedder_cache)
    if args.sweep is not None:
        return _sweep(args)
    return _export_world(config_from(args, verbosity=_verbosity(args)), args.export_world)


def _sweep(args):
    from explorer.sweep.overrides import Overrides
    from explorer.sweep.runner import run_sweep

    overrides = Overrides(tuple(args.set or ()), args.out)
    return run_sweep(
        main, args.sweep, args.parallel, args.dry_run, args.executor, args.track, overrides, args.experiment, args.pilot
    )


def _verbosity(args) -> int:
    return -1 if args.quiet else 1 if args.verbose else 0


def _run(args, config, started, signals):
    from explorer.cli.console import RunConsole
    from explorer.cli.live_view import LivePage
    from explorer.run.runner import ExplorationRun

    with LivePage(args.serve) as page:
        run = ExplorationRun(config, started=started, stopping=signals.hold, view=page.views(RunConsole.shown))
        code = _execute(run, signals)
        page.serve_on(interrupted=signals.signum is not None)
        return code


def _execute(run, signals):
    """Run it; the exit code."""
    from explorer.records.summary import BUDGET_EXHAUSTED
    from explorer.records.trace import DiskWriteError
    from explorer.run.stop import RunFailed

    try:
        summary = run.execute()
    except DiskWriteError as error:  # before the run could start: config.json, trace.jsonl, run.log
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    except RunFailed as error:
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE if error.users_mistake else EXIT_FAILED
    if summary["status"] == "interrupted" or signals.signum is not None:
        return signals.exit_code or EXIT_INTERRUPTED
    return EXIT_BUDGET if summary["status"] == BUDGET_EXHAUSTED else 0


def _refuse_misplaced(args):
    """ConfigError for an option given without the action it goes with."""
    misplaced = next((flag for flag in SWEEP_ONLY if _given(args, flag)), None)
    if misplaced and args.sweep is None:
        raise ConfigError(f"{misplaced} goes with --sweep FILE: {SWEEP_ONLY[misplaced]}")
    if args.pilot is not None and not args.dry_run:
        raise ConfigError("--pilot goes with --dry-run: it runs K of the sweep's baseline runs to plan the rest")
    others = [flag for flag in ONE_SHOT_ACTIONS if _given(args, flag)]
    if args.serve is not None and others:
        raise ConfigError(f"--serve watches a run: it does not go with {others[0]}")


def _given(args, flag):
    return getattr(args, flag.removeprefix("--").replace("-", "_")) not in (None, False)


def _report(run_dir):
    from explorer.records.run_lock import run_in_use
    from explorer.report.run_report import rebuild_report
    from explorer.run.recover import report_so_far

    report = report_so_far(run_dir) if run_in_use(run_dir) else rebuild_report(run_dir)
    _warn(report.warnings)
    print(f"Wrote {report.path}")
    return 0


def _warn(warnings):
    for warning in warnings:
        print(f"main.py: warning: {warning}", file=sys.stderr)


def _check_export_sft(args):
    given = [flag for flag in ("--only-found-new", "--only-reached") if _given(args, flag)]
    if args.export_sft is None and given:
        raise ConfigError(f"{given[0]} goes with --export-sft RUN_DIR...: it writes their decisions")
    if args.out is not None and args.export_sft is None and args.sweep is None:
        raise ConfigError(
            "--out goes with --export-sft RUN_DIR... (the JSONL file to write) or --sweep FILE (the sweep's directory)"
        )
    if args.export_sft is None:
        return
    if args.out is None:
        raise ConfigError("--export-sft needs --out FILE.jsonl: the file the examples are written to")
    if args.out.exists() or args.out.is_symlink():
        raise ConfigError(f"--out {args.out}: the file is there already; name a new one")
    if not args.out.absolute().parent.is_dir():
        raise ConfigError(f"--out {args.out}: {args.out.parent} is not a directory")


def _export_sft(args):
    from explorer.report.training_data import ExportFilter, export_sft

    count = export_sft(args.export_sft, args.out, ExportFilter(args.only_found_new, args.only_reached))
    left_out = (
        f"; left out: {_counted(count.runs_left_out, 'run')}, {_counted(count.left_out, 'decision')}"
        if count.runs_left_out or count.left_out
        else ""
    )
    runs_kept = _counted(count.runs - count.runs_left_out, "run")
    print(f"Wrote {_counted(count.examples, 'example')} from {runs_kept} to {args.out}{left_out}")
    if count.echoes_left_out:
        print(
            f"Left out {_counted(count.echoes_left_out, 'text')} (messages, reasons) that gave back their prompt's instructions"
        )
    if note := count.skipped_note():
        _warn([note])
    return 0


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _export_world(config, path):
    from explorer.records.trace import write_text
    from perception.families.export import with_run_starts, world_to_yaml
    from perception.families.generate import generated_mapping
    from perception.families.names import is_generated

    if not is_generated(str(config.episode.world)):
        raise ConfigError(
            f"--export-world writes a generated world: give --world gen:FAMILY, not {config.episode.world}"
        )
    if path.is_dir():
        raise ConfigError(f"--export-world {path}: that is a directory; name a new file")
    if path.exists() or path.is_symlink():
        raise ConfigError(f"--export-world {path}: the file is there already; name a new one")
    if not path.absolute().parent.is_dir():
        raise ConfigError(f"--export-world {path}: {path.parent} is not a directory")
    mapping = generated_mapping(str(config.episode.world), config.episode.world_seed, config.episode.find)
    write_text(path, world_to_yaml(with_run_starts(mapping, config.episode.seed, config.team.agents)))
    print(
        f"Wrote {path}: the world {config.episode.world} with world seed {config.episode.world_seed or 0}, "
        f"its start poses those of --seed {config.episode.seed}"
    )
    return 0


def _export_embedder(cache_dir):
    from memory import onnx_export

    cache_dir = cache_dir or onnx_export.default_cache_dir()
    if onnx_export.is_exported(cache_dir):
        print(f"The ONNX export is there already: {onnx_export.export_dir(cache_dir)}")
        return 0
    print(onnx_export.exporting_message(cache_dir), flush=True)
    try:
        folder = onnx_export.export(cache_dir)
    except onnx_export.ExportError as error:
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Exported to {folder}")
    return 0


def _recover(run_dir):
    from explorer.cli.console import RunConsole
    from explorer.run.recover import recover_summary

    recovered = recover_summary(run_dir)
    summary = recovered.summary
    RunConsole(summary["agents"], 0, summary["total_objects"], 0).print_summary(summary, run_dir)
    _warn(recovered.warnings)
    print(f"Rebuilt {run_dir / 'summary.json'} from its trace.")
    return 0


def entry_point() -> None:
    """The installed command, `multi-agent-explorer`: the same as `python main.py`."""
    sys.exit(main())
