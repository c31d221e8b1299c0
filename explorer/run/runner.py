"""One exploration run: set up the team, run each agent's flow on its own thread, record it."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from dataclasses import asdict, replace

from explorer.config.run_config import COORDINATOR, ConfigError
from explorer.cli.console import RunConsole
from explorer.model.client import CallGate, missing_api_keys
from explorer.model.client import load as load_model_client
from explorer.run.perception_setup import perception_setup
from explorer.policies.factory import BUILT_IN, make_coordinator, make_policy
from explorer.policies.directed import DirectedPolicy
from explorer.config.profiles import coordinator_profile, default_profiles, load_profiles
from explorer.run.recover import rebuild_memories
from explorer.report.run_report import write_report
from explorer.run.run_dir import claim_run_dir
from explorer.schedule.event import EventSchedule, step_at
from explorer.schedule.lockstep import LockstepSchedule
from explorer.schedule.timed_perception import TimedPerception
from explorer.run.summary import RunStats, build_summary
from explorer.team.split import NotJoined, team_arguments
from explorer.team.store import InProcessStore
from explorer.run.trace import DiskWriteError, TraceWriter, write_json
from memory import onnx_export
from memory.embedder import EmbedderError, SentenceEmbedder
from memory.vector_memory import MemoryFileError, VectorMemory
from nodes.coordinator import build_coordinator_flow
from nodes.flow import build_agent_flow
from nodes.interfaces import RunStopped, SightReport, StopRun
from nodes.state import new_agent_state, new_coordinator_state
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
    def __init__(self, config, embedder=None, policy_factory=make_policy, started=None, stopping=None):
        """Check everything a run needs; raises ConfigError or the FileProblem or WindowError found.

        `started` (perf_counter) is when the process started; start-up is measured from it.
        `stopping()` is called once the run begins to stop, before it writes its summary and memories
        (the command line then holds further interrupts, so nothing cuts that writing short).
        """
        self.started = started if started is not None else time.perf_counter()
        self.stopping = stopping or (lambda: None)
        if config.store and not config.run_id:
            config = replace(config, run_id=new_run_id())  # one process runs the whole team: a run of its own
        if embedder is not None:  # the summary and config.json say which backend the run really used
            config = replace(config, embedder=embedder.backend)
        self.config = config
        self.policy_factory = policy_factory
        self.agent_ids = config.agent_ids()
        # A team split across processes runs some of its members here (all, otherwise).
        self.local = config.local_members()
        self.local_ids = [agent_id for agent_id in self.agent_ids if agent_id in self.local]
        self.profiles = (
            load_profiles(config.profiles, config.agents, config.model)
            if config.profiles
            else default_profiles(config.agents, config.model)
        )
        # The coordinator, where there is one, is the last member of the team; it neither sees nor moves.
        self.coordinator = coordinator_profile(config.profiles, config.coordinator) if config.coordinator else None
        self.members = dict(zip(self.agent_ids, self.profiles))
        if self.coordinator:
            self.members[COORDINATOR] = self.coordinator
        # Each agent's profile as resolved (file, default and --model): what the agents really ran with.
        self.resolved_profiles = {agent_id: asdict(profile) for agent_id, profile in self.members.items()}
        timed = [a for a, p in zip(self.agent_ids, self.profiles) if p.timed()]
        if timed and config.schedule != "event":
            raise ConfigError(
                f"{config.profiles}: {timed[0]}'s profile sets a timing (tick_interval, obs_delay, act_delay, "
                "msg_delay): timings need --schedule event"
            )
        self.setup = perception_setup(config, self.profiles, self.agent_ids, self.local_ids)
        self.steps = config.steps or self.setup.default_steps or DEFAULT_STEPS
        # A team on a Redis store: the server is reached now, before anything slow starts.
        self.team = _split_team(config, list(self.members), self.local) if config.store else None
        # Loads in the background while the run is set up and its first step
        # perceives and decides; the first memory written waits for it.
        if embedder is None and config.embedder == "onnx" and config.verbosity >= 0:
            _announce_export(config.embedder_cache)
        self.embedder = embedder or SentenceEmbedder(config.embedder, config.embedder_cache)
        try:
            if not config.replay_replies:  # a replay asks no model: it needs neither litellm nor an API key
                _prepare_model_client(self.local, [self.members[m] for m in self.local], check_keys=not config.api_base)
            # The service encodes as soon as every agent has asked, without waiting out its gathering time.
            self.embedder.expected_callers = len(self.local_ids)
            self.memories = {agent_id: VectorMemory(self.embedder) for agent_id in self.local_ids}
            self.resumed, self.rebuilt = {}, False
            if config.resume_memory:
                self.resumed, self.rebuilt = _load_memories(config.resume_memory, self.local_ids, self.embedder)
                self.memories.update(self.resumed)
            if self.team:
                self.team.claim(team_arguments(config, self.resolved_profiles))
            self.run_dir = claim_run_dir(config.run_dir)  # last: a run that fails its checks leaves no directory
        except (ConfigError, MemoryFileError):
            if self.team:
                self.team.release()
            self.embedder.wait_loaded()
            raise

    def execute(self) -> dict:
        """Run to the end, Ctrl-C or failure; the summary is written in every case."""
        store = self.team.run.store() if self.team else InProcessStore()
        # One bound on model calls in flight, for decisions and vision alike; cancelled when the run stops.
        gate = CallGate(self.config.max_concurrency)
        perception = self.setup.start(store, self.agent_ids, self.run_dir, gate)
        try:
            for agent_id in self.agent_ids:
                store.register_agent(agent_id, perception.get_agent_state(agent_id).to_dict())
        except StopRun as error:  # a Redis store that went away since the start-up check
            raise RunFailed(str(error)) from None
        environment = perception.get_environment_info()
        world_size = environment.size[:2] if self.config.mode == "mock" else None
        console = RunConsole(list(self.members), self.steps, environment.total_objects, self.config.verbosity, world_size)
        log_handlers = _start_logging(self.run_dir, console)
        trace = TraceWriter(self.run_dir / "trace.jsonl")
        stats = RunStats(list(self.members), coordinator=COORDINATOR if self.coordinator else None)
        commit = StepCommit(store, trace, stats, console, COORDINATOR if self.coordinator else None, self.started)
        members = list(self.members)
        if self.config.schedule == "event":
            timings = {agent_id: profile.timing() for agent_id, profile in self.members.items()}
            perception = TimedPerception(perception, {a: timings[a] for a in self.agent_ids})
            schedule = EventSchedule(members, timings, self.steps, commit, commit.deliver, perception)
        else:
            # In lock-step the coordinator ticks every tick_interval rounds.
            every = {COORDINATOR: max(1, round(self.coordinator.tick_interval))} if self.coordinator else {}
            schedule = LockstepSchedule(members, self.steps, commit, every)
        if self.team:
            schedule = self.team.schedule(schedule)
        failure = FirstFailure()
        profiles = self.resolved_profiles
        write_json(
            self.run_dir / "config.json",
            {
                **self.config.to_dict(),
                "steps": self.steps,
                "agent_ids": self.agent_ids,
                "agent_profiles": profiles,
            },
        )
        log.info("Run directory: %s", self.run_dir)
        for warning in self.setup.warnings:
            log.warning(warning)
        if self.config.resume_memory:
            for agent_id in self.agent_ids:
                resumed = self.resumed.get(agent_id)
                log.info("%s starts with %d memories from %s", agent_id, len(resumed) if resumed else 0, self.config.resume_memory)
            if self.rebuilt:
                log.warning(
                    "%s saved no memories (was it killed?): they were rebuilt from its trace.jsonl, re-embedded",
                    self.config.resume_memory,
                )
        status, started = "completed", None
        stop = RunStop(gate, schedule, failure, self.team)
        try:
            if self.team:
                self._join()
                self.team.watch(stop.by_team)
            workers = [
                (agent_id, _flow_work(build_agent_flow, self._agent_state(
                    agent_id, self.members[agent_id], store, perception, environment, schedule, gate)))
                for agent_id in self.local_ids
            ]
            if COORDINATOR in self.local and self.coordinator:
                workers.append((COORDINATOR, _flow_work(
                    build_coordinator_flow, self._coordinator_state(store, perception, environment, schedule, gate))))
            if self.team:
                workers += schedule.relays()
            log.info(
                "%d agents explore %s for %d steps: %s%s",
                len(self.agent_ids), environment.name, self.steps,
                ", ".join(f"{a} as {p.role} with {p.model}" for a, p in zip(self.agent_ids, self.profiles)),
                f"; a Coordinator with {self.coordinator.model} directs them" if self.coordinator else "",
            )
            started = time.perf_counter()
            commit.startup["first_step_started_seconds"] = round(started - self.started, 3)
            with console:
                status = _run_agents(workers, stop, failure, self.stopping)
            if status == "completed" and commit.stats.every_call_failed():
                failure.record("every model call of the run failed: see the errors in trace.jsonl and run.log")
                status = "failed"
        except KeyboardInterrupt:
            status = "interrupted"
            stop(interrupted=True)
        except RunFailed as error:  # this process could not join its team
            failure.record(str(error), error.users_mistake)
            status = "failed"
        finally:
            self.stopping()
            if self.team:
                self.team.leave()
            wall = time.perf_counter() - started if started else 0.0
            trace.close()
            self._save_memories()
            summary = build_summary(
                self.config, environment, commit.stats, wall, status, failure.message, commit.startup,
                profiles, len(schedule.never_delivered),
            )
            try:
                write_json(self.run_dir / "summary.json", summary)
                _write_report(self.run_dir)
            except DiskWriteError as error:
                log.error("%s", error)
                failure.record(str(error))
                status = "failed"
            console.print_summary(summary, self.run_dir)
            log.debug(  # run.log's closing line; the console has just shown the summary
                "Run %s after %d agent-steps: %d of %s objects found",
                status, sum(summary["steps"].values()), len(summary["objects_discovered"]),
                summary["total_objects"] if summary["total_objects"] is not None else "unknown",
            )
            _stop_logging(log_handlers)
            # A run that stops early (a refused key at step 1) may end before the model has loaded.
            self.embedder.wait_loaded()
        if status == "failed":
            raise RunFailed(f"{failure.message} (see {self.run_dir / 'run.log'})", failure.users_mistake)
        return summary

    def _join(self):
        """Wait for the rest of the team; raises RunFailed where it does not come."""
        try:
            self.team.join(self.config.join_timeout, log.warning)
        except (NotJoined, StopRun) as error:
            raise RunFailed(str(error)) from None
        log.info("The team has joined run %r: %s here", self.team.run.run_id, ", ".join(self.local))

    def _agent_state(self, agent_id, profile, store, perception, environment, schedule, gate):
        return new_agent_state(
            agent_id=agent_id,
            team=list(self.agent_ids),
            shared_memory=store,
            perception=perception,
            environment=environment,
            role=profile.role,
            persona=profile.persona_text(),
            policy=_directed(self.policy_factory(profile, agent_id, self.config, gate), self.coordinator),
            schedule=schedule,
            comm_enabled=self.config.comm,
            coordinator=COORDINATOR if self.coordinator else None,
            max_steps=self.steps,
            memory_index=self.memories[agent_id],
        )

    def _coordinator_state(self, store, perception, environment, schedule, gate):
        return new_coordinator_state(
            agent_id=COORDINATOR,
            team=list(self.agent_ids),
            shared_memory=store,
            environment=environment,
            available_actions=list(perception.available_actions(self.agent_ids[0])),
            policy=make_coordinator(self.coordinator, self.config, gate),
            schedule=schedule,
            max_steps=self.steps,
        )

    def _save_memories(self):
        """Each agent's memory into <run>/memory/<agent>/, for a later --resume-memory."""
        for agent_id, memory in self.memories.items():
            try:
                memory.save(self.run_dir / MEMORY_DIR / agent_id)
            except MemoryFileError as error:
                log.error("%s's memory was not saved: %s", agent_id, error)


def _write_report(run_dir):
    """report.html from the run's files; a report that cannot be made is logged, and the run is not lost for it."""
    try:
        write_report(run_dir)
    except OSError as error:
        log.error("report.html was not written: %s", error)
    except Exception as error:  # a bug in the report must not cost the run its ending
        log.error("report.html was not written: %r", error)
        log.debug("report traceback", exc_info=True)


def _split_team(config, members, local):
    # Imports redis: only for a team on a Redis store.
    from explorer.team.redis_store import RedisRun
    from explorer.team.split import SplitTeam

    return SplitTeam(RedisRun(config.store, config.run_id), members, local)


def _directed(policy, coordinator):
    """Under a coordinator, an explorer's own choice gives way to the directives it receives."""
    return DirectedPolicy(policy, COORDINATOR) if coordinator else policy


def _prepare_model_client(agent_ids, profiles, check_keys):
    """For a run with models: litellm loaded now, while the embedding model loads, and each model's
    API key checked, so that a missing one is refused at start, not at its first call."""
    models = [(agent_id, p.model) for agent_id, p in zip(agent_ids, profiles) if p.model not in BUILT_IN]
    if not models:
        return
    load_model_client()
    for agent_id, model in models if check_keys else ():
        missing = missing_api_keys(model)
        if missing:
            raise ConfigError(
                f"{agent_id}'s model {model!r} needs {' or '.join(missing)} in the environment: "
                "set it, or give --api-base URL for a local server"
            )


class StepCommit:
    """Applies a finished step: the team store first, then the trace, the counts and the live view.

    The schedule calls it once per step with the reports in agent order, and
    never twice at once, so it is the only writer of what it holds.
    """

    def __init__(self, store, trace, stats, console, coordinator, process_started):
        self.store, self.trace, self.stats, self.console = store, trace, stats, console
        self.coordinator = coordinator  # its id, where there is one: the explorers' reports go to it
        self.process_started = process_started
        # Seconds from the process's start until the first step began, and until every agent had finished it.
        self.startup = {"first_step_started_seconds": None, "first_step_done_seconds": None}

    def __call__(self, reports, at, complete=True):
        """Commit the ticks at time `at` (a lock-step round r is at r - 1); `complete` is False for
        what a stopped run had handed in."""
        lines = []
        began = time.perf_counter()
        committed = self.store.commit_step(reports)
        self.stats.commit_seconds.append(time.perf_counter() - began)
        for report, new_objects in zip(reports, committed):
            for message in report.outgoing:
                log.info("%s -> %s: %s", report.agent_id, message.recipient, message.message)
            for name in new_objects:
                log.info("%s found %s at step %d", report.agent_id, name, report.step)
            report.record.new_objects = new_objects
            self.stats.delivered(len(report.outgoing))  # lock-step delivers a step's messages as it commits it
            line = report.record.to_dict()
            lines.append(line)
            self.trace.write(line)
            report.remember()  # after the trace line: a step is in both, or in neither
            if report.upward:
                self.deliver(report.upward)
            self.stats.add(line)
            if line["result"]:  # a coordinator's tick has none
                log.debug("%s step %d: %s -> %s", report.agent_id, report.step, line["action"], line["result"]["outcome"])
        team_found = list(self.stats.discoveries)
        if complete:
            # The team's curves count time as steps of an agent ticking once a second.
            self.stats.step_completed(step_at(at), len(team_found))
            if self.startup["first_step_done_seconds"] is None:
                self.startup["first_step_done_seconds"] = round(time.perf_counter() - self.process_started, 3)
        self.console.step_committed(lines, team_found, complete)


    def deliver(self, sent):
        """A message reaches its mailbox, or a report its coordinator's inbox (on the clock, when
        the sender's msg_delay has passed)."""
        if isinstance(sent, SightReport):
            self.store.send_report(self.coordinator, sent)
            return
        log.info("%s -> %s: %s", sent.sender, sent.recipient, sent.message)
        self.store.send_message(sent)
        self.stats.delivered()


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


class RunStop:
    """Stops the run here, once: on an agent's failure, Ctrl-C, or (for a split team) the team's word.

    A split team's other processes are told why, so that one process's
    failure or Ctrl-C stops the whole team.
    """

    def __init__(self, gate, schedule, failure, team=None):
        self.gate, self.schedule, self.failure, self.team = gate, schedule, failure, team
        self.interrupted = False  # by Ctrl-C here, or in a teammate's process

    def __call__(self, interrupted=False):
        self.interrupted |= interrupted
        self.gate.cancel()  # model calls in flight are abandoned: a stop is felt within a second or two
        if self.team:
            here = ", ".join(self.team.local)
            self.team.tell(
                f"{here}: interrupted (Ctrl-C)" if interrupted else f"{here}: {self.failure.message or 'stopped'}",
                "interrupted" if interrupted else "failed",
            )
        self.schedule.stop()

    def by_team(self, reason, kind):
        """Another process stopped the team, or fell silent, or the store is gone."""
        if kind == "interrupted":
            log.warning("The team was stopped: %s", reason)
        else:
            self.failure.record(reason)
        self(interrupted=kind == "interrupted")


def _flow_work(build_flow, agent):
    return lambda: build_flow().run(agent)


def _run_agents(workers, stop, failure, stopping):
    """Run each (name, work) on its own thread until all end; the run's status."""
    finished = [threading.Event() for _ in workers]
    threads = [
        threading.Thread(target=_work_main, args=(name, work, stop, failure, done), name=name, daemon=True)
        for (name, work), done in zip(workers, finished)
    ]
    for thread in threads:
        thread.start()
    try:
        _wait(finished)
    except KeyboardInterrupt as interrupt:
        stopping()
        log.warning(
            "Interrupted (%s): stopping now, abandoning model calls in flight; the finished steps are kept",
            interrupt or "Ctrl-C",
        )
        stop(interrupted=True)
        # Each agent leaves at its next hand-in; the interpreter must not
        # shut down under a thread that is still inside torch.
        _wait(finished)
    for thread in threads:
        thread.join()
    return "interrupted" if stop.interrupted else "failed" if failure.message else "completed"


def _work_main(name, work, stop, failure, finished):
    try:
        work()
    except RunStopped:
        pass
    except (StopRun, PerceptionStopped, EmbedderError, DiskWriteError) as error:
        log.error("%s: %s", name, error)
        failure.record(str(error), getattr(error, "users_mistake", False))
        stop()
    except Exception as error:
        log.error("%s failed: %r", name, error)
        log.debug("%s traceback", name, exc_info=True)
        failure.record(f"{name} failed: {error!r}")
        stop()
    finally:
        finished.set()


def new_run_id():
    """A run id for a team on a Redis store that did not name one: the time and a random tail."""
    return time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


def _announce_export(cache_dir):
    """The first run on a machine exports the model (seconds): say so before the pause."""
    cache_dir = cache_dir or onnx_export.default_cache_dir()
    if not onnx_export.is_exported(cache_dir):
        print(onnx_export.exporting_message(cache_dir), file=sys.stderr, flush=True)


def _load_memories(run_dir, agent_ids, embedder):
    """({agent_id: VectorMemory} saved in an earlier run, rebuilt from its trace or not);
    agents it did not have start empty."""
    saved = run_dir / MEMORY_DIR
    found = {agent_id: saved / agent_id for agent_id in agent_ids if (saved / agent_id / "meta.json").is_file()}
    if found:
        return {agent_id: VectorMemory.load(path, embedder) for agent_id, path in found.items()}, False
    # A run that was killed saved no memory, but its trace holds every memory text.
    rebuilt = rebuild_memories(run_dir, agent_ids, embedder)
    if not rebuilt:
        raise MemoryFileError(
            f"{run_dir}: no saved memories for {', '.join(agent_ids)} (expected {saved}/<agent>/) and no trace "
            "to rebuild them from; give the directory of an earlier run"
        )
    return rebuilt, True


def _wait(events):
    # Not Thread.join: on Python 3.11, Ctrl-C during join() can mark a thread
    # that is still running as stopped (bpo-45274's cleanup).
    for event in events:
        while not event.wait(0.1):  # short waits keep Ctrl-C responsive everywhere
            pass


class _RunLogHandler(logging.FileHandler):
    def handleError(self, record):
        """A log line the disk has no room for is lost quietly: the console and the error say what happened."""

    def close(self):
        try:
            super().close()
        except OSError:
            pass  # its last lines did not fit on the disk: lost quietly, as above


def _start_logging(run_dir, console):
    logger = log  # not the root logger: libraries' debug output stays out
    logger.setLevel(logging.DEBUG)
    file_handler = _RunLogHandler(run_dir / "run.log", encoding="utf-8")
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [%(threadName)s] %(message)s"))
    console_handler = console.log_handler()
    logger.addHandler(file_handler)
    logger.addHandler(console_handler)
    return file_handler, console_handler


def _stop_logging(handlers):
    for handler in handlers:
        log.removeHandler(handler)
        handler.close()
