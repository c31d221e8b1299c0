"""One exploration run: set up the team, run each agent's flow on its own thread, record it."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime

from explorer.backends import make_backend
from explorer.config import DEFAULT_STEPS, ROOT
from explorer.console import RunConsole
from explorer.llm import AuthenticationFailed
from explorer.lockstep import Lockstep, RunStopped
from explorer.perception_setup import perception_setup
from explorer.profiles import default_profiles, load_profiles
from explorer.store import BadRecipient, SharedStore
from explorer.summary import RunStats, build_summary
from explorer.trace import TraceWriter, write_json
from memory.embedder import EmbedderError, SentenceEmbedder
from memory.vector_memory import MemoryFileError, VectorMemory
from nodes.flow import build_agent_flow
from perception.base import PerceptionStopped

log = logging.getLogger("explorer")
MEMORY_DIR = "memory"  # in the run directory: one folder per agent


class RunFailed(RuntimeError):
    """The run could not go on; the summary and trace hold what it did."""

    def __init__(self, message, users_mistake=False):
        super().__init__(message)
        self.users_mistake = users_mistake  # e.g. an API key the provider refuses


class ExplorationRun:
    def __init__(self, config, embedder=None, backend_factory=make_backend, started=None):
        """Check everything a run needs; raises ConfigError or the FileProblem or WindowError found.

        `started` (perf_counter) is when the process started; start-up is measured from it.
        """
        self.started = started if started is not None else time.perf_counter()
        self.config = config
        self.backend_factory = backend_factory
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
        self.store = SharedStore()
        # One bound on model calls in flight, for decisions and vision alike.
        self.model_gate = threading.BoundedSemaphore(self.config.max_concurrency)
        self.perception = self.setup.start(self.store, self.agent_ids, self.run_dir, self.model_gate)
        for agent_id in self.agent_ids:
            self.store.register_agent(agent_id, self.perception.get_agent_state(agent_id).to_dict())
        self.environment = self.perception.get_environment_info()
        self.stats = RunStats(self.agent_ids)
        self.console = RunConsole(self.agent_ids, self.steps, self.environment.total_objects, self.config.verbosity)
        file_log = self._start_logging()
        self.trace = TraceWriter(self.run_dir / "trace.jsonl")
        self.lockstep = Lockstep(self.agent_ids, self._commit)
        self.failure, self.users_mistake = None, False
        write_json(self.run_dir / "config.json", {**self.config.to_dict(), "steps": self.steps, "agent_ids": self.agent_ids})
        log.info("Run directory: %s", self.run_dir)
        for warning in self.setup.warnings:
            log.warning(warning)
        if self.config.resume_memory:
            for agent_id in self.agent_ids:
                resumed = self.resumed.get(agent_id)
                log.info("%s starts with %d memories from %s", agent_id, len(resumed) if resumed else 0, self.config.resume_memory)
        status, started = "completed", None
        self.startup = {"first_step_started_seconds": None, "first_step_done_seconds": None}
        try:
            agents = [self._agent_state(a, profile) for a, profile in zip(self.agent_ids, self.profiles)]
            log.info(
                "%d agents explore %s for %d steps with the %s backend",
                len(agents), self.environment.name, self.steps, self.config.model,
            )
            started = time.perf_counter()
            self.startup["first_step_started_seconds"] = round(started - self.started, 3)
            with self.console:
                status = self._run_agents(agents)
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            wall = time.perf_counter() - started if started else 0.0
            self.trace.close()
            self._save_memories()
            summary = build_summary(
                self.config, self.environment, self.store, self.stats, wall, status, self.failure, self.startup
            )
            write_json(self.run_dir / "summary.json", summary)
            self.console.print_summary(summary, self.run_dir)
            _stop_logging(file_log)
            # A run that stops early (a refused key at step 1) may end before the model has loaded.
            self.embedder.wait_loaded()
        if status == "failed":
            raise RunFailed(f"{self.failure} (see {self.run_dir / 'run.log'})", self.users_mistake)
        return summary

    def _agent_state(self, agent_id, profile):
        """The per-agent dict (spec section 5); the flow reads and writes only this."""
        memory = self.memories[agent_id]
        return {
            "agent_id": agent_id,
            "team": self.agent_ids,
            "shared_memory": self.store,
            "perception": self.perception,
            "environment": self.environment,
            "lockstep": self.lockstep,
            "profile": profile,
            "backend": self.backend_factory(profile, agent_id, self.config, self.model_gate),
            "comm_enabled": self.config.comm,
            "max_steps": self.steps,
            "memory": memory,
            "memory_index": memory.index,
            "memory_texts": memory.texts,
            "position": None,
            "step_count": 0,
            "visible_objects": [],
            "visible_caption": "",
            "retrieved_memories": [],
            "other_agent_messages": [],
            "action": None,
            "action_reason": "",
            "message_to_others": "",
            "explored_objects": set(),
            "action_history": [],
            "timings": {},
            "step_errors": [],
        }

    def _run_agents(self, agents):
        finished = [threading.Event() for _ in agents]
        threads = [
            threading.Thread(target=self._agent_main, args=(agent, done), name=agent["agent_id"], daemon=True)
            for agent, done in zip(agents, finished)
        ]
        for thread in threads:
            thread.start()
        try:
            _wait(finished)
        except KeyboardInterrupt:
            log.warning("Interrupted: keeping the finished steps")
            self.lockstep.stop()
            # Each agent leaves at its next hand-in; the interpreter must not
            # shut down under a thread that is still inside torch.
            _wait(finished)
            status = "interrupted"
        else:
            status = "failed" if self.failure else "completed"
        for thread in threads:
            thread.join()
        return status

    def _agent_main(self, agent, finished):
        try:
            build_agent_flow().run(agent)
        except RunStopped:
            pass
        except AuthenticationFailed as error:
            log.error("%s: %s", agent["agent_id"], error)
            self.failure = self.failure or f"the model provider refused the credentials: {error}"
            self.users_mistake = True
            self.lockstep.stop()
        except (PerceptionStopped, EmbedderError) as error:
            log.error("%s: %s", agent["agent_id"], error)
            self.failure = self.failure or str(error)
            self.lockstep.stop()
        except Exception as error:
            log.error("%s failed: %r", agent["agent_id"], error)
            log.debug("%s traceback", agent["agent_id"], exc_info=True)
            self.failure = self.failure or f"{agent['agent_id']} failed: {error!r}"
            self.lockstep.stop()
        finally:
            finished.set()

    def _commit(self, reports):
        """Apply a step's reports in agent order: the only place the team's state changes."""
        for report in reports:
            record = report.record
            for recipient, text in report.outgoing_messages:
                try:
                    self.perception.send_message(report.agent_id, recipient, text, step=report.step)
                    log.info("%s -> %s: %s", report.agent_id, recipient, text)
                except BadRecipient as error:
                    record["errors"].append(f"message not sent: {error}")
            record["new_objects"] = self.store.add_objects(report.seen_objects, report.agent_id, report.step)
            for name in record["new_objects"]:
                log.info("%s found %s at step %d", report.agent_id, name, report.step)
            self.store.update_position(report.agent_id, report.pose)
            self.trace.write(record)
            self.stats.add(record)
            log.debug(
                "%s step %d: %s -> %s", report.agent_id, report.step, record.get("action"), record["result"]["outcome"]
            )
        round_complete = len(reports) == len(self.agent_ids)
        if round_complete:
            self.stats.step_completed(reports[0].step, len(self.store.objects()))
            if self.startup["first_step_done_seconds"] is None:
                self.startup["first_step_done_seconds"] = round(time.perf_counter() - self.started, 3)
        self.console.step_committed([r.record for r in reports], self.store.objects(), round_complete)

    def _save_memories(self):
        """Each agent's memory into <run>/memory/<agent>/, for a later --resume-memory."""
        for agent_id, memory in self.memories.items():
            try:
                memory.save(self.run_dir / MEMORY_DIR / agent_id)
            except MemoryFileError as error:
                log.error("%s's memory was not saved: %s", agent_id, error)

    def _start_logging(self):
        logger = log  # not the root logger: libraries' debug output stays out
        logger.setLevel(logging.DEBUG)
        file_handler = logging.FileHandler(self.run_dir / "run.log", encoding="utf-8")
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(message)s"))
        console_handler = self.console.log_handler()
        logger.addHandler(file_handler)
        logger.addHandler(console_handler)
        return file_handler, console_handler


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


def _stop_logging(handlers):
    for handler in handlers:
        log.removeHandler(handler)
        handler.close()


def _new_run_dir():
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = ROOT / "runs" / stamp
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{stamp}-{n}")
    return path
