"""Who takes part in a run: the explorers with their profiles, the coordinator, and the members this process runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from explorer.config.call_options import GOALS
from explorer.config.profiles import Profile, coordinator_profile, default_profiles, load_profiles
from explorer.config.run_config import RunConfig
from explorer.config.team_options import COORDINATOR, SYSTEM
from explorer.policies.built_in import plans_team
from explorer.policies.plugin import is_plugin, load_plugin
from explorer.records.errors import ConfigError
from explorer.schedule.event import tick_rate_problem
from explorer.schedule.timed_perception import Timing


@dataclass(frozen=True)
class Roster:
    """The team as resolved from the profiles file, its defaults and --model: what the agents really run with.

    The coordinator, where there is one, is the last member of the team; it neither sees nor moves. With
    --coordinators K there are K of them (Coordinator1..K), then the system agent above them.
    """

    agent_ids: list[str]  # the explorers, in order
    profiles: list[Profile]  # theirs, in the same order
    coordinator: Profile | None
    members: dict[str, Profile]  # every member: the explorers, then the coordinator
    local: list[str]  # the members this process runs: a team split across processes runs some here, all otherwise
    local_ids: list[str]  # the explorers among them
    coordinator_ids: list[str]  # the coordinators' ids, in order ([] without a coordinator)
    system: str | None = None  # the system agent's id, above two coordinators or more

    @property
    def coordinator_id(self) -> str | None:
        return COORDINATOR if self.coordinator else None

    def resolved_profiles(self) -> dict[str, dict]:
        """Each member's profile as a dict, for config.json, the summary and the team's claim."""
        return {agent_id: asdict(profile) for agent_id, profile in self.members.items()}

    def timings(self) -> dict[str, Timing]:
        """Each member's timing on the simulated clock (--schedule event)."""
        return {agent_id: profile.timing() for agent_id, profile in self.members.items()}

    def lineup(self) -> str:
        """Who plays what, with which model, for the log."""
        explorers = ", ".join(f"{a} as {p.role} with {p.model}" for a, p in zip(self.agent_ids, self.profiles))
        if not self.coordinator:
            return explorers
        if self.system:
            return (
                explorers
                + f"; {len(self.coordinator_ids)} coordinators with {self.coordinator.model} under a system agent"
            )
        return explorers + f"; a Coordinator with {self.coordinator.model} directs them"


def roster_of(config: RunConfig) -> Roster:
    """The checked roster; raises ConfigError, or the FileProblem a profiles file has."""
    agent_ids = config.team.agent_ids()
    local = config.team.local_members()
    profiles = (
        load_profiles(config.team.profiles, config.team.agents, config.calls.model)
        if config.team.profiles
        else default_profiles(config.team.agents, config.calls.model)
    )
    # Under star and tree the coordinator is the explorers' channel: it ticks with them unless told otherwise.
    every = 1.0 if config.team.topology.through_directors else None
    coordinator = (
        coordinator_profile(config.team.profiles, config.team.coordinator, interval=every)
        if config.team.coordinator
        else None
    )
    profiles = [_resolved(profile, config) for profile in profiles]
    coordinator = _resolved(coordinator, config) if coordinator else None
    members = dict(zip(agent_ids, profiles))
    directors = config.team.directors()
    for director in directors:
        if director == SYSTEM:
            members[director] = coordinator_profile(config.team.profiles, "offline", "system")
        elif coordinator is not None:
            members[director] = coordinator
    explorers_here = [a for a in agent_ids if a in local]
    system = SYSTEM if SYSTEM in directors else None
    roster = Roster(
        agent_ids, profiles, coordinator, members, local, explorers_here, config.team.coordinator_ids(), system
    )
    _check_timings(roster, config)
    _check_plugins(roster)
    _check_classical(roster, config)
    return roster


def _resolved(profile: Profile, config: RunConfig) -> Profile:
    """The profile with the run's options filled in where it leaves them to the command line."""
    return replace(profile, reply_format=profile.reply_format or config.calls.reply_format)


def _check_plugins(roster: Roster) -> None:
    """Each policy plug-in named is imported now, so that a bad one is refused before the run starts."""
    for model in dict.fromkeys(profile.model for profile in roster.profiles):
        if is_plugin(model):
            load_plugin(model)
    if roster.coordinator and is_plugin(roster.coordinator.model):
        raise ConfigError(
            "--coordinator must be offline or a model's name: a policy plug-in decides an explorer's steps"
        )


def _check_classical(roster: Roster, config: RunConfig) -> None:
    """A classical explorer plans its own part of the team's plan on the grid's map: not under a coordinator
    that directs it, nor with goals chosen for it, nor on a game's screen."""
    classical = next((profile.model for profile in roster.profiles if plans_team(profile.model)), None)
    if classical is None:
        return
    if config.episode.mode != "mock":
        raise ConfigError(f"--model {classical} needs --mode mock: it plans on the grid map a mock world gives")
    if config.team.coordinator is not None:
        raise ConfigError(f"--model {classical} plans the team's assignment itself: not with --coordinator")
    if config.calls.decide == GOALS:
        raise ConfigError(f"--model {classical} chooses its own goals: --decide goals is for a model")


def _check_timings(roster: Roster, config: RunConfig) -> None:
    timed = [a for a, p in zip(roster.agent_ids, roster.profiles) if p.timed()]
    if timed and not config.timing.schedule_kind.timed_profiles:
        raise ConfigError(
            f"{config.team.profiles}: {timed[0]}'s profile sets a timing (tick_interval, obs_delay, act_delay, "
            "msg_delay, think_time): timings need --schedule event"
        )
    too_often = tick_rate_problem(roster.timings()) if config.timing.schedule_kind.timed_profiles else None
    if too_often:
        raise ConfigError(f"{config.team.profiles}: {too_often}")
