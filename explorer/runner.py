"""One exploration run: set up the team, run each agent's flow on its own thread, record it."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime
from pathlib import Path

from explorer.console import RunConsole
from explorer.perception_setup import perception_setup
from explorer.policies import make_policy
from explorer.profiles import default_profiles, load_profiles
from explorer.schedule.lockstep import LockstepSchedule
from explorer.summary import RunStats, build_summary
from explorer.team.store import InProcessStore
from explorer.trace import TraceWriter, write_json
from memory.embedder import EmbedderError, SentenceEmbedder
from memory.vector_memory import MemoryFileError, VectorMemory
from nodes.flow import build_agent_flow
from nodes.interfaces import RunStopped, StopRun
from nodes.state import new_agent_state
from perception.base import PerceptionStopped

log = logging.getLogger("explorer")
MEMORY_DIR = "memory"  # in the run directory: one folder per agent
DEFAULT_STEPS = 20  # when neither --steps nor the world sets a budget


class RunFailed(RuntimeError):
    """The run could not go on; the summary and trace hold what it did."""

    def __init__(self, message, users_mistake=False):
        super().__init__(message)
        self.users_mistake = users_mistake  # e.g. an API key the provider refuses


class ExplorationRun:
    def __init__(self, config, embedder=None, policy_factory=make_policy, started=None):
        """Check everything a run needs; raises ConfigError or the FileProblem or WindowError found.

        `started` (perf_counter) is when the process started; start-up is measured from it.
        """
        self.started = started if started is not None else time.perf_counter()
        self.config = config
        self.policy_factory = policy_factory
        self.agent_ids = config.agent_ids()
        self.profiles = (
            load_profiles(config.profiles, config.agents, config.model)
            if config.profiles
            else default_profiles(config.agents, config.model)
        )
        self.setup = perception_setup(config, self.profiles, self.agent_ids)
        self.steps = config.steps or self.setup.default_steps or DEFAULT_STEPS
        self.run_dir = config.run_dir or _new_run_dir()
        # Loads in the background while the run is set up and its first step
        # perceives and decides; the first memory written waits for it.
        self.embedder = embedder or SentenceEmbedder()
        # The service encodes as soon as every agent has asked, without waiting out its gathering time.
        self.embedder.expected_callers = len(self.agent_ids)
        self.memories = {agent_id: VectorMemory(self.embedder) for agent_id in self.agent_ids}
        self.resumed = {}
        if config.resume_memory:
            try:
                self.resumed = _load_memories(config.resume_memory, self.agent_ids, self.embedder)
            except MemoryFileError:
                self.embedder.wait_loaded()
                raise
            self.memories.update(self.resumed)

    def execute(self) -> dict:
        """Run to the end, Ctrl-C or failure; the summary is written in every case."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        store = InProcessStore()
        # One bound on model calls in flight, for decisions and vision alike.
        gate = threading.BoundedSemaphore(self.config.max_concurrency)
        perception = self.setup.start(store, self.agent_ids, self.run_dir, gate)
        for agent_id in self.agent_ids:
            store.register_agent(agent_id, perception.get_agent_state(agent_id).to_dict())
        environment = perception.get_environment_info()
        console = RunConsole(self.agent_ids, self.steps, environment.total_objects, self.config.verbosity)
        log_handlers = _start_logging(self.run_dir, console)
        trace = TraceWriter(self.run_dir / "trace.jsonl")
        commit = StepCommit(store, trace, RunStats(self.agent_ids), console, len(self.agent_ids), self.started)
        schedule = LockstepSchedule(self.agent_ids, self.steps, commit)
        failure = FirstFailure()
        write_json(self.run_dir / "config.json", {**self.config.to_dict(), "steps": self.steps, "agent_ids": self.agent_ids})
        log.info("Run directory: %s", self.run_dir)
        for warning in self.setup.warnings:
            log.warning(warning)
        if self.config.resume_memory:
            for agent_id in self.agent_ids:
                resumed = self.resumed.get(agent_id)
                log.info("%s starts with %d memories from %s", agent_id, len(resumed) if resumed else 0, self.config.resume_memory)
        status, started, agents = "completed", None, []
        try:
            agents = [
                new_agent_state(
                    agent_id=agent_id,
                    team=list(self.agent_ids),
                    shared_memory=store,
                    perception=perception,
                    environment=environment,
                    role=profile.role,
                    persona=profile.persona_text(),
                    policy=self.policy_factory(profile, agent_id, self.config, gate),
                    schedule=schedule,
                    comm_enabled=self.config.comm,
                    max_steps=self.steps,
                    memory_index=self.memories[agent_id],
                )
                for agent_id, profile in zip(self.agent_ids, self.profiles)
            ]
            log.info(
                "%d agents explore %s for %d steps with the %s policy",
                len(agents), environment.name, self.steps, self.config.model,
            )
            started = time.perf_counter()
            commit.startup["first_step_started_seconds"] = round(started - self.started, 3)
            with console:
                status = _run_agents(agents, schedule, failure)
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            wall = time.perf_counter() - started if started else 0.0
            trace.close()
            self._save_memories()
            seen = {agent["agent_id"]: sorted(agent["explored_objects"]) for agent in agents}
            summary = build_summary(
                self.config, environment, store, commit.stats, wall, status, failure.message, commit.startup, seen
            )
            write_json(self.run_dir / "summary.json", summary)
            console.print_summary(summary, self.run_dir)
            _stop_logging(log_handlers)
            # A run that stops early (a refused key at step 1) may end before the model has loaded.
            self.embedder.wait_loaded()
        if status == "failed":
            raise RunFailed(f"{failure.message} (see {self.run_dir / 'run.log'})", failure.users_mistake)
        return summary

    def _save_memories(self):
        """Each agent's memory into <run>/memory/<agent>/, for a later --resume-memory."""
        for agent_id, memory in self.memories.items():
            try:
                memory.save(self.run_dir / MEMORY_DIR / agent_id)
            except MemoryFileError as error:
                log.error("%s's memory was not saved: %s", agent_id, error)


class StepCommit:
    """Applies a finished step: the team store first, then the trace, the counts and the live view.

    The schedule calls it once per step with the reports in agent order, and
    never twice at once, so it is the only writer of what it holds.
    """

    def __init__(self, store, trace, stats, console, team_size, process_started):
        self.store, self.trace, self.stats, self.console = store, trace, stats, console
        self.team_size = team_size
        self.process_started = process_started
        # Seconds from the process's start until the first step began, and until every agent had finished it.
        self.startup = {"first_step_started_seconds": None, "first_step_done_seconds": None}

    def __call__(self, reports):
        lines = []
        for report, new_objects in zip(reports, self.store.commit_step(reports)):
            for message in report.outgoing:
                log.info("%s -> %s: %s", report.agent_id, message.recipient, message.message)
            for name in new_objects:
                log.info("%s found %s at step %d", report.agent_id, name, report.step)
            report.record.new_objects = new_objects
            line = report.record.to_dict()
            lines.append(line)
            self.trace.write(line)
            self.stats.add(line)
            log.debug("%s step %d: %s -> %s", report.agent_id, report.step, line["action"], line["result"]["outcome"])
        team_found = self.store.objects()
        round_complete = len(reports) == self.team_size
        if round_complete:
            self.stats.step_completed(reports[0].step, len(team_found))
            if self.startup["first_step_done_seconds"] is None:
                self.startup["first_step_done_seconds"] = round(time.perf_counter() - self.process_started, 3)
        self.console.step_committed(lines, team_found, round_complete)


class FirstFailure:
    """What stopped the run: the first agent's failure; later ones are only logged. Agents' threads share it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.message = None
        self.users_mistake = False

    def record(self, message, users_mistake=False):
        with self._lock:
            if self.message is None:
                self.message, self.users_mistake = message, users_mistake


def _run_agents(agents, schedule, failure):
    finished = [threading.Event() for _ in agents]
    threads = [
        threading.Thread(target=_agent_main, args=(agent, schedule, failure, done), name=agent["agent_id"], daemon=True)
        for agent, done in zip(agents, finished)
    ]
    for thread in threads:
        thread.start()
    try:
        _wait(finished)
    except KeyboardInterrupt:
        log.warning("Interrupted: keeping the finished steps")
        schedule.stop()
        # Each agent leaves at its next hand-in; the interpreter must not
        # shut down under a thread that is still inside torch.
        _wait(finished)
        status = "interrupted"
    else:
        status = "failed" if failure.message else "completed"
    for thread in threads:
        thread.join()
    return status


def _agent_main(agent, schedule, failure, finished):
    agent_id = agent["agent_id"]
    try:
        build_agent_flow().run(agent)
    except RunStopped:
        pass
    except (StopRun, PerceptionStopped, EmbedderError) as error:
        log.error("%s: %s", agent_id, error)
        failure.record(str(error), getattr(error, "users_mistake", False))
        schedule.stop()
    except Exception as error:
        log.error("%s failed: %r", agent_id, error)
        log.debug("%s traceback", agent_id, exc_info=True)
        failure.record(f"{agent_id} failed: {error!r}")
        schedule.stop()
    finally:
        finished.set()


def _load_memories(run_dir, agent_ids, embedder):
    """{agent_id: VectorMemory} saved in an earlier run; agents it did not have start empty."""
    saved = run_dir / MEMORY_DIR
    found = {agent_id: saved / agent_id for agent_id in agent_ids if (saved / agent_id).is_dir()}
    if not found:
        raise MemoryFileError(
            f"{run_dir}: no saved memories for {', '.join(agent_ids)} (expected {saved}/<agent>/); "
            "give the directory of an earlier run"
        )
    return {agent_id: VectorMemory.load(path, embedder) for agent_id, path in found.items()}


def _wait(events):
    # Not Thread.join: on Python 3.11, Ctrl-C during join() can mark a thread
    # that is still running as stopped (bpo-45274's cleanup).
    for event in events:
        while not event.wait(0.1):  # short waits keep Ctrl-C responsive everywhere
            pass


def _start_logging(run_dir, console):
    logger = log  # not the root logger: libraries' debug output stays out
    logger.setLevel(logging.DEBUG)
    file_handler = logging.FileHandler(run_dir / "run.log", encoding="utf-8")
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(message)s"))
    console_handler = console.log_handler()
    logger.addHandler(file_handler)
    logger.addHandler(console_handler)
    return file_handler, console_handler


def _stop_logging(handlers):
    for handler in handlers:
        log.removeHandler(handler)
        handler.close()


def _new_run_dir():
    """runs/<timestamp>/ under the current directory."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path.cwd() / "runs" / stamp
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{stamp}-{n}")
    return path
