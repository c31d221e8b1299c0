"""The command line: `python main.py --mode mock --agents 2`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from explorer.config.run_config import (
    DECIDE_LEVELS,
    MODES,
    SCHEDULES,
    VISION_CALLS,
    ConfigError,
    RunConfig,
)
from explorer.cli.signals import StopSignals
from memory.embedder import BACKENDS
from memory.onnx_export import CACHE_ENV
from perception.keymap import DEFAULT_KEYMAP, SHIPPED_KEYMAPS
from perception.world import DEFAULT_WORLD, SHIPPED_WORLDS
from perception.yaml_files import shipped_or_given

EXIT_USAGE, EXIT_FAILED, EXIT_INTERRUPTED = 2, 1, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ConfigError(message)


def build_parser():
    parser = _Parser(
        prog="main.py",
        description="Several LLM agents explore a world together, each with its own PocketFlow loop.",
    )
    parser.add_argument("--mode", default="mock", help=f"perception backend: {' or '.join(MODES)} (default mock)")
    parser.add_argument("--agents", type=int, default=2, help="number of agents (default 2)")
    parser.add_argument("--steps", type=int, help="steps per agent (default: the world's max_steps)")
    parser.add_argument(
        "--world", type=Path, default=DEFAULT_WORLD,
        help="world file for mock mode, or a shipped world's name: apartment (default), office, warehouse, garden",
    )
    parser.add_argument("--seed", type=int, default=42, help="seed for placement and the built-in backends")
    parser.add_argument(
        "--model",
        default="offline",
        help="offline (built-in explorer, the default), random, or a litellm model such as gpt-4o-mini",
    )
    parser.add_argument("--api-base", help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--profiles", type=Path, help="YAML file of agent profiles: role, persona, model, temperature")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a model call is cut off (default 60)")
    parser.add_argument(
        "--max-concurrency", type=int, default=32, help="model calls in flight at once, over all agents (default 32)"
    )
    parser.add_argument("--price-in", type=float, help="dollars per million prompt tokens, for models litellm cannot price")
    parser.add_argument("--price-out", type=float, help="dollars per million completion tokens, likewise")
    parser.add_argument("--no-comm", action="store_true", help="turn off all messages between agents")
    parser.add_argument(
        "--decide", choices=DECIDE_LEVELS, default="actions",
        help="what a model chooses: each step's action (default), or a goal the planner walks to (mock mode)",
    )
    parser.add_argument(
        "--schedule", choices=SCHEDULES, default="lockstep",
        help="lockstep (default): every agent takes step k before any takes k + 1; event: a simulated clock with "
        "each agent's tick_interval, obs_delay, act_delay and msg_delay from --profiles (mock mode)",
    )
    parser.add_argument(
        "--coordinator", metavar="MODEL",
        help="add a Coordinator that directs the explorers: offline, or a model (mock mode)",
    )
    parser.add_argument("--run-dir", type=Path, help="where to write the run (default runs/<timestamp>/ here)")
    parser.add_argument(
        "--resume-memory", type=Path, metavar="RUN_DIR", help="start each agent with the memory it saved in an earlier run"
    )
    parser.add_argument(
        "--recover", type=Path, metavar="RUN_DIR",
        help="write the summary.json of a run that was killed, from its trace, and exit",
    )
    parser.add_argument(
        "--replay-replies", type=Path, metavar="RUN_DIR",
        help="answer each model call with the reply recorded in an earlier run's trace, instead of calling the model",
    )
    parser.add_argument("--report", type=Path, metavar="RUN_DIR", help="rebuild an earlier run's report.html and exit")
    parser.add_argument(
        "--sweep", type=Path, metavar="FILE", help="run the grid of conditions a sweep file gives, and exit"
    )
    parser.add_argument(
        "--parallel", type=int, default=os.cpu_count() or 1, metavar="N",
        help="with --sweep: runs at once (default: the number of cores)",
    )
    embedding = parser.add_argument_group("the embedding model", "all-MiniLM-L6-v2, from the installed package")
    embedding.add_argument(
        "--embedder", choices=BACKENDS, default="onnx",
        help="onnx (default): ONNX Runtime on a one-time export, quick to start; torch: sentence-transformers",
    )
    embedding.add_argument(
        "--embedder-cache", type=Path, metavar="DIR",
        help=f"where the ONNX export is kept (default ${CACHE_ENV}, else ~/.cache/multi-agent-explorer)",
    )
    embedding.add_argument(
        "--export-embedder", action="store_true", help="make the ONNX export now, if it is not there yet, and exit"
    )
    team = parser.add_argument_group("a team split across processes", "start every process with the same run arguments")
    team.add_argument(
        "--store", metavar="URL", help="the team store: redis://HOST:PORT/DB (default: in this process)"
    )
    team.add_argument("--run-id", metavar="NAME", help="the run the processes share (with --store)")
    team.add_argument(
        "--local-agents", type=_agent_list, default=(), metavar="Agent1,Agent2",
        help="the agents this process runs (default all; the Coordinator runs with Agent1)",
    )
    team.add_argument(
        "--join-timeout", type=float, default=120.0, metavar="SECONDS",
        help="how long to wait for the other processes' agents to join (default 120)",
    )
    unity = parser.add_argument_group("unity mode", "each option once for all agents, or once per agent in order")
    unity.add_argument(
        "--window-title", action="append", default=[], metavar="REGEX", help="the game window, by its title"
    )
    unity.add_argument(
        "--keymap",
        action="append",
        default=[],
        type=Path,
        metavar="PATH",
        help=f"key map file, or a shipped key map's name (default {DEFAULT_KEYMAP.stem})",
    )
    unity.add_argument(
        "--region",
        action="append",
        default=[],
        type=_region,
        metavar="X,Y,W,H",
        help="the part of the window an agent sees, in window pixels (split screen)",
    )
    unity.add_argument(
        "--vision",
        default="combined",
        help=f"vision calls per step: {' or '.join(VISION_CALLS)} (combined: one call gives caption and objects)",
    )
    unity.add_argument(
        "--pause-key", metavar="KEY",
        help="a key that pauses the game: pressed before the model is asked and again before the action",
    )
    volume = parser.add_mutually_exclusive_group()
    volume.add_argument("-v", "--verbose", action="store_true", help="log every agent-step")
    volume.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    return parser


def _region(text):
    try:
        x, y, width, height = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not X,Y,W,H (four whole numbers of pixels)") from None
    if x < 0 or y < 0 or width < 2 or height < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: X and Y must not be negative, W and H must be at least 2")
    return (x, y, width, height)


def _agent_list(text):
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of agents such as Agent1,Agent2")
    return names


def parse_config(argv) -> RunConfig:
    return config_from(build_parser().parse_args(argv))


def config_from(args) -> RunConfig:
    return RunConfig(
        mode=args.mode,
        agents=args.agents,
        steps=args.steps,
        world=shipped_or_given(args.world, SHIPPED_WORLDS),
        seed=args.seed,
        model=args.model,
        api_base=args.api_base,
        comm=not args.no_comm,
        decide=args.decide,
        schedule=args.schedule,
        coordinator=args.coordinator,
        run_dir=args.run_dir,
        profiles=args.profiles,
        resume_memory=args.resume_memory,
        replay_replies=args.replay_replies,
        timeout=args.timeout,
        max_concurrency=args.max_concurrency,
        price_in=args.price_in,
        price_out=args.price_out,
        verbosity=-1 if args.quiet else 1 if args.verbose else 0,
        window_titles=tuple(args.window_title),
        keymaps=tuple(shipped_or_given(path, SHIPPED_KEYMAPS) for path in args.keymap),
        regions=tuple(args.region),
        vision=args.vision,
        pause_key=args.pause_key,
        store=args.store,
        run_id=args.run_id,
        local_agents=args.local_agents,
        join_timeout=args.join_timeout,
        embedder=args.embedder,
        embedder_cache=args.embedder_cache,
    ).check()


def main(argv=None, started=None) -> int:
    """Returns the exit code; `started` is when the process started (perf_counter), for the start-up figures.

    Called with `argv` (from Python, not as the program), it leaves the signal handlers as it found them.
    """
    signals = StopSignals().install()
    try:
        return _main(argv, started, signals)
    except KeyboardInterrupt:  # before the run started, or while it was being set up
        print("main.py: interrupted before the run started", file=sys.stderr)
        return signals.exit_code or EXIT_INTERRUPTED
    finally:
        if argv is not None:
            signals.restore()


def _main(argv, started, signals):
    # Imported here so that --help and argument errors answer at once.
    from explorer.run.runner import ExplorationRun, RunFailed
    from explorer.run.trace import DiskWriteError
    from memory.vector_memory import MemoryFileError
    from perception.window import WindowError
    from perception.yaml_files import FileProblem  # worlds, profiles, key maps

    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
        if args.recover is not None:
            return _recover(args.recover)
        if args.report is not None:
            return _report(args.report)
        if args.export_embedder:
            return _export_embedder(args.embedder_cache)
        if args.sweep is not None:
            from explorer.sweep.runner import run_sweep

            return run_sweep(args.sweep, args.parallel, build_parser, config_from)  # each run checked as here
        run = ExplorationRun(config_from(args), started=started, stopping=signals.hold)
    except (ConfigError, FileProblem, WindowError, MemoryFileError) as error:
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except DiskWriteError as error:  # a rebuilt report, or a sweep's results, the disk refused
        print(f"main.py: error: {error}", file=sys.stderr)
        return EXIT_FAILED
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
    return 0


def _report(run_dir):
    from explorer.report.run_report import rebuild_report

    path = rebuild_report(run_dir)
    print(f"Wrote {path}")
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

    summary = recover_summary(run_dir)
    RunConsole(summary["agents"], 0, summary["total_objects"], 0).print_summary(summary, run_dir)
    print(f"Rebuilt {run_dir / 'summary.json'} from its trace.")
    return 0


def entry_point():
    """The installed command, `multi-agent-explorer`: the same as `python main.py`."""
    sys.exit(main())
