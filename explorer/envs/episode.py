"""One episode in a mock world, stepped from outside: what the PettingZoo and Gymnasium environments share.

The world, the agents' placement, what a pose sees and what an action does are the app's own
(perception/mock.py); the team's finds and messages go through its team store (explorer/team/store.py),
in agent order, as the app's step commit does. So the same seed and actions make the same episode as a
lock-step run: after the episode's step t, each agent's pose, view, messages and finds are those its
step t + 1 begins with in the run's trace.jsonl (after the reset, those of its step 1). `context(agent)` is
the DecisionContext that step would be decided on (nodes/context_from_state.py builds both), with no
memories: a policy in the environment remembers what it keeps itself.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

from explorer.config.run_config import RunConfig
from explorer.run.roster import roster_of
from explorer.run.runner import DEFAULT_STEPS
from explorer.team.store import MAP_END, HeldMap, InProcessStore
from nodes.context_from_state import explorer_context, team_context_of
from nodes.decision_context import RECENT_ACTIONS, ActionTaken, AgentSetup, DecisionContext, HeardMessage
from nodes.interfaces import StepReport
from nodes.perception_node import room_entered
from perception.base import BROADCAST, Message, Observation
from perception.families.generate import open_world
from perception.mock import MockPerception
from perception.targets import missing_targets, target_of

Cell = tuple[int, int, int]  # (x, y, level)


@dataclass(frozen=True)
class Rewards:
    """What a find is worth to the agent that made it: an object, or a free cell (x, y, level), that no one
    in the team had seen before, and, under a search task, a target the team had not found (its first object,
    as perception/targets.py has it), on top of the object's. Within a step the agents see in agent order, as
    the app commits them."""

    per_object: float = 1.0
    per_cell: float = 0.1
    per_target: float = 1.0


@dataclass(frozen=True)
class AgentStep:
    """What one agent perceives as a step ends (or the episode starts), and what it found."""

    observation: Observation
    messages: tuple[Message, ...]  # the teammates' messages of the step just taken, in agent order
    new_objects: tuple[str, ...]  # the objects in view the team had not seen before
    new_cells: int  # likewise, the free cells in view
    reward: float
    outcome: str | None  # what its action did: moved, turned or blocked; None at the start

    def info(self) -> dict[str, object]:
        """The environments' info for the agent."""
        return {
            "new_objects": list(self.new_objects),
            "new_cells": self.new_cells,
            "outcome": self.outcome,
            "pose": self.observation.pose.to_dict(),
            "visible_objects": list(self.observation.visible_objects),
        }


@dataclass
class AgentSoFar:
    """What an agent's next decision rests on besides the team's store: as a run's agent state keeps it."""

    last: AgentStep  # what it perceived as the last step ended
    rooms_entered: list[str]
    history: list[ActionTaken]  # its last RECENT_ACTIONS


class Episode:
    """The agents of a checked RunConfig (its world, world seed, agents, seed, random starts, steps and comm)
    in its world."""

    def __init__(self, config: RunConfig, rewards: Rewards) -> None:
        self.config, self.rewards = config, rewards
        self.world = open_world(config.episode.world, config.episode.world_seed, config.episode.find)
        self.agent_ids = config.team.agent_ids()
        self.steps = config.episode.steps or self.world.max_steps or DEFAULT_STEPS
        self.seed = config.episode.seed
        self.number = 0  # episodes begun: a policy that keeps what it learns starts afresh with each
        self.map_held = (0, 0)  # the team's map as the step under way began (TeamStore.map_news)
        profiles = roster_of(config).members
        self.setups = {
            agent_id: AgentSetup(profiles[agent_id].role, profiles[agent_id].persona_text(), self.comm, None)
            for agent_id in self.agent_ids
        }
        self.reset()

    @property
    def comm(self) -> bool:
        """Whether the team's messages are on."""
        return self.config.team.topology.messages

    @property
    def over(self) -> bool:
        """Whether the episode has ended: its steps taken, or its search task done."""
        return self.taken >= self.steps or self.done

    @property
    def done(self) -> bool:
        """Whether the team has found every target of its search task (False without one), as a run ends: at
        the end of the step that saw the last one, seen as the step began (a run's step perceives, then acts)."""
        if not self.world.targets:
            return False
        found = [name for name, seen in self.store.discoveries().items() if (seen["step"] or 0) <= self.taken]
        return not missing_targets(self.world.targets, found)

    def reset(self, seed: int | None = None) -> dict[str, AgentStep]:
        """A new episode, its agents placed as the run's --seed places them (`seed`, else the last one)."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise ValueError(f"seed must be a whole number or None, not {seed!r}")
        self.seed = self.seed if seed is None else int(seed)
        self.taken = 0  # steps taken since the reset
        self.store = InProcessStore()
        self.perception = MockPerception(
            self.world, self.store, self.agent_ids, self.seed, self.config.episode.random_starts
        )
        for agent_id in self.agent_ids:
            self.store.register_agent(agent_id, self.perception.get_agent_state(agent_id).to_dict())
        self.team_cells: set[Cell] = set()  # the free cells the team has seen
        self.team_walls: set[tuple[int, int]] = set()  # and the walls (x, y)
        self.targets_found: set[str] = set()  # the search task's targets the team has found
        self.number += 1
        self.agents: dict[str, AgentSoFar] = {}
        return self._perceive({}, {})

    def context(self, agent_id: str) -> DecisionContext:
        """The DecisionContext of the agent's next step, as a lock-step run's agent would decide it on."""
        so_far = self.agents[agent_id]
        heard: list[HeardMessage] = [
            {"sender": m.sender, "recipient": m.recipient, "message": m.message} for m in so_far.last.messages
        ]
        env, step = self.perception.get_environment_info(), self.taken + 1
        # The store holds the views this step begins with; a run's holds them once the step is committed.
        found = {name: seen for name, seen in self.store.discoveries().items() if (seen["step"] or 0) < step}
        return explorer_context(
            team_context_of(agent_id, self.agent_ids, step, self.steps, env, found),
            self.setups[agent_id],
            so_far.last.observation,
            self.store,
            self.perception,
            dead_reckoned=env.dead_reckoned,
            rooms_entered=so_far.rooms_entered,
            messages=heard,
            memories=(),
            history=so_far.history,
            team_map=HeldMap(self.store, self.map_held),
        )

    def step(self, actions: Mapping[str, tuple[str, str]]) -> dict[str, AgentStep]:
        """Every agent's (action, message to the team: "" for none), carried out in agent order."""
        missing = [agent_id for agent_id in self.agent_ids if agent_id not in actions]
        if missing:
            raise ValueError(f"no action for {', '.join(missing)}: every agent acts at each step")
        if self.over:
            ended = "its targets were found" if self.done else f"{self.steps} steps"
            raise RuntimeError(f"the episode is over after {ended}: reset it")
        self.taken += 1
        outcomes, sent = {}, {}
        for agent_id in self.agent_ids:
            action, message = actions[agent_id]
            message = message if self.comm else ""
            result = self.perception.execute_action(agent_id, action)
            outcomes[agent_id] = result.outcome
            history = self.agents[agent_id].history
            history.append(
                {
                    "step": self.taken,
                    "action": action,
                    "outcome": result.outcome,
                    "detail": result.detail,
                    "message": message,
                }
            )
            del history[:-RECENT_ACTIONS]  # what a context shows: an episode of any length keeps no more
            if message:
                sent[agent_id] = [Message(agent_id, BROADCAST, message, step=self.taken)]
        return self._perceive(sent, outcomes)

    def _perceive(self, sent: dict[str, list[Message]], outcomes: dict[str, str]) -> dict[str, AgentStep]:
        """Each agent's view, committed to the team in agent order with the messages it sent."""
        views = {agent_id: self.perception.observe(agent_id) for agent_id in self.agent_ids}
        self.map_held = self.store.map_news(MAP_END).read  # a run's map holds these views once the step is committed
        reports = [
            StepReport(
                agent_id,
                self.taken + 1,  # the app's step these views begin
                None,
                list(view.visible_objects),
                sent.get(agent_id, []),
                pose=view.pose.to_dict(),
                object_cells=dict(view.object_cells),
                seen_cells=tuple(view.seen_cells),
                seen_walls=tuple(view.seen_walls),
            )
            for agent_id, view in views.items()
        ]
        found = dict(zip(self.agent_ids, self.store.commit_step(reports)))
        steps = {
            agent_id: self._agent_step(agent_id, view, found[agent_id], outcomes) for agent_id, view in views.items()
        }
        for agent_id, step in steps.items():
            so_far = self.agents.setdefault(agent_id, AgentSoFar(step, [], []))
            so_far.last = step
            room_entered(step.observation, so_far.rooms_entered)
        return steps

    def _agent_step(
        self, agent_id: str, view: Observation, new_objects: list[str], outcomes: dict[str, str]
    ) -> AgentStep:
        new_cells = set(view.seen_cells) - self.team_cells
        self.team_cells |= new_cells
        self.team_walls.update(view.seen_walls)
        messages = tuple(self.perception.poll_messages(agent_id))
        targets = {target_of(name, self.world.targets) for name in new_objects} - {None} - self.targets_found
        self.targets_found |= {target for target in targets if target}
        reward = self.rewards.per_object * len(new_objects) + self.rewards.per_cell * len(new_cells)
        reward += self.rewards.per_target * len(targets)
        return AgentStep(view, messages, tuple(new_objects), len(new_cells), reward, outcomes.get(agent_id))
