"""One exploration run: set up the team, run each agent's flow on its own thread, record it.

Making an ExplorationRun checks everything and claims the run directory last,
so that a run that fails its checks leaves no directory; `execute` then runs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError
from explorer.records.run_view import QuietView, RunViewFactory
from explorer.records.summary import build_summary
from explorer.records.trace import DiskWriteError, write_json
from explorer.run.crew import Crew, PolicyFactory
from explorer.run.memories import Resumed, resume_memories, save_memories
from explorer.run.perception_setup import perception_setup
from explorer.run.policy_factory import make_policy
from explorer.run.prepare import claim_team, join_team, prepare_model_client, settle_config, split_team, start_embedder
from explorer.run.roster import roster_of
from explorer.run.run_dir import claim_run_dir
from explorer.run.run_records import RunRecords, start_records, summary_settings
from explorer.run.schedules import Schedule, make_schedule
from explorer.run.search_prior import with_search_prior
from explorer.run.shared_world import SharedWorld, start_world
from explorer.run.stop import FirstFailure, RunFailed, RunStop
from explorer.run.workers import Work, run_workers
from explorer.team.split import SplitSchedule
from memory.embedder import SentenceEmbedder
from memory.vector_memory import MemoryFileError, VectorMemory

log = logging.getLogger("explorer")
DEFAULT_STEPS = 20  # when neither --steps nor the world sets a budget


class ExplorationRun:
    """One run of the team: checked, and its directory claimed, when made; run by `execute`."""

    def __init__(
        self,
        config: RunConfig,
        embedder: SentenceEmbedder | None = None,
        policy_factory: PolicyFactory = make_policy,
        started: float | None = None,
        stopping: Callable[[], None] | None = None,
        view: RunViewFactory = QuietView,
    ) -> None:
        """Check everything a run needs; raises ConfigError or the FileProblem or WindowError found.

        `started` (perf_counter) is when the process started; start-up is measured from it.
        `stopping()` is called once the run begins to stop, before it writes its summary and memories
        (the command line then holds further interrupts, so nothing cuts that writing short).
        """
        self.started = started if started is not None else time.perf_counter()
        self.stopping, self.view = stopping or (lambda: None), view  # view: what the run shows as it goes
        self.config = config = settle_config(config, embedder)
        self.roster = roster_of(config)
        self.setup = perception_setup(config, self.roster.profiles, self.roster.agent_ids, self.roster.local_ids)
        self.steps = config.episode.steps or self.setup.default_steps or DEFAULT_STEPS
        # A team on a Redis store: the server is reached now, before anything slow starts.
        self.team = split_team(config, self.roster) if config.team.store else None
        self.embedder = start_embedder(config, embedder)
        try:
            memories, self.resumed = self._prepare()
            self.run_dir = self._claim()
        except (ConfigError, MemoryFileError):
            self._give_back()
            raise
        policies = with_search_prior(policy_factory, config, self.setup, self.embedder)
        self.crew = Crew(config, self.roster, self.steps, memories, policies)

    def _prepare(self) -> tuple[dict[str, VectorMemory], Resumed]:
        """The model client loaded and its keys checked; each local agent's memory, resumed where asked."""
        config, roster = self.config, self.roster
        if not config.calls.replay_replies:  # a replay asks no model: it needs neither litellm nor an API key
            local_profiles = [roster.members[member] for member in roster.local]
            prepare_model_client(config, roster.local, local_profiles)
        memories = {agent_id: VectorMemory(self.embedder) for agent_id in roster.local_ids}
        resumed = resume_memories(config.memory.resume_memory, roster.local_ids, self.embedder)
        memories.update(resumed.memories)
        return memories, resumed

    def _claim(self) -> Path:
        """The team's agents claimed, then the run directory (last: a run that fails its checks leaves none)."""
        claim_team(self.team, self.config, self.roster)
        return claim_run_dir(self.config.output.run_dir)

    def _give_back(self) -> None:
        """What a run that failed its checks had taken: the team's agents, and the model still loading."""
        if self.team:
            self.team.release()
        self.embedder.wait_loaded()

    def execute(self) -> dict:
        """Run to the end, Ctrl-C or failure; the summary is written in every case."""
        world = start_world(self.config, self.setup, self.roster, self.run_dir, self.team, self.embedder)
        records = start_records(self.config, self.roster, self.steps, world, self.run_dir, self.started, self.view)
        schedule, world = make_schedule(self.config, self.roster, self.steps, records.commit, world, self.team)
        self._write_config()
        failure = FirstFailure()
        stop = RunStop(world.gate, schedule, failure, self.team)
        status, began = "completed", None
        try:
            workers = self._start_workers(world, schedule, stop)
            began = records.commit.first_step_begins()
            status = self._wait(workers, records, stop, failure)
        except KeyboardInterrupt:
            status = "interrupted"
            stop(interrupted=True)
        except (RunFailed, ConfigError) as error:  # it could not join its team, or make a plug-in's policy
            failure.record(str(error), not isinstance(error, RunFailed) or error.users_mistake)
            status = "failed"
        finally:
            status, summary = self._finish(world, records, schedule, failure, status, began)
        if status == "failed":
            raise RunFailed(f"{failure.message} (see {self.run_dir / 'run.log'})", failure.users_mistake)
        return summary

    def _write_config(self) -> None:
        """config.json as the run really runs, and what the run starts with into its log."""
        write_json(
            self.run_dir / "config.json",
            {
                **self.config.to_dict(),
                "steps": self.steps,
                "agent_ids": self.roster.agent_ids,
                "agent_profiles": self.roster.resolved_profiles(),
            },
        )
        log.info("Run directory: %s", self.run_dir)
        for warning in self.setup.warnings:
            log.warning(warning)
        self.resumed.announce(self.roster.agent_ids)

    def _start_workers(self, world: SharedWorld, schedule: Schedule, stop: RunStop) -> list[tuple[str, Work]]:
        """Once the whole team has joined: each local member's work, and a split team's relays."""
        if self.team:
            join_team(self.team, self.config.team.join_timeout, self.roster.local)
            self.team.watch(stop.by_team)
        workers = self.crew.workers(world, schedule)
        if isinstance(schedule, SplitSchedule):  # a split team's: the other processes' steps are relayed here
            workers += schedule.relays()
        roster, place = self.roster, world.environment.name
        log.info("%d agents explore %s for %d steps: %s", len(roster.agent_ids), place, self.steps, roster.lineup())
        return workers

    def _wait(self, workers: list[tuple[str, Work]], records: RunRecords, stop: RunStop, failure: FirstFailure) -> str:
        """The workers run to their end, under the live view; the run's status."""
        with records.view:
            status = run_workers(workers, stop, failure, self.stopping)
        if status == "completed" and records.stats.every_call_failed():
            failure.record("every model call of the run failed: see the errors in trace.jsonl and run.log")
            status = "failed"
        return status

    def _finish(
        self,
        world: SharedWorld,
        records: RunRecords,
        schedule: Schedule,
        failure: FirstFailure,
        status: str,
        began: float | None,
    ) -> tuple[str, dict]:
        """Save, summarise, report, however the run ended; the final status, and the summary."""
        self.stopping()
        if self.team:
            self.team.leave()
        records.trace.close()
        save_memories(self.crew.memories, self.run_dir)  # it embeds the texts held back: the wall time counts it
        summary = build_summary(
            summary_settings(self.config),
            world.environment,
            records.stats,
            time.perf_counter() - began if began else 0.0,  # the wall time
            status,
            failure.message,
            records.commit.startup,
            self.roster.resolved_profiles(),
            len(schedule.never_delivered),
            world.gate.budget.spent if world.gate.budget else None,
            world.mock_world,
        )
        try:
            records.write(summary, self.run_dir)
        except DiskWriteError as error:
            log.error("%s", error)
            failure.record(str(error))
            status = "failed"
        records.close(summary, self.run_dir, status)
        # A run that stops early (a refused key at step 1) may end before the model has loaded.
        self.embedder.wait_loaded()
        return status, summary
