"""Coordinators: the policies of the team's Coordinator, which directs the explorers (`--coordinator`).

A coordinator neither sees nor moves. Its map is the union of what the
explorers reported seeing (nodes/decision_context.SightReport), and it knows where
each explorer was when it reported. Each tick it answers with directives
(`direct(context) -> DecisionOutcome` with `directives`), each sent to one
explorer as a sentence (explorer/policies/sentences.py) that DirectedPolicy
reads.

- `OfflineCoordinator` steps in where the team's map shows what an
  explorer's own cannot. It knows where each explorer is going: the goal it
  was sent, the heading it last announced, or else the goal its own map (the
  coordinator keeps each explorer's own view beside the union) would give.
  An explorer whose goal would still show mostly unseen ground is left alone,
  and that ground counts as taken; the others are given goals by greedy
  assignment on the union map, by utility (unseen cells per step of the way,
  the explorers' own rule, with the ground nearer another explorer worth
  less), the best explorer-goal pair first, each goal's view then taken. A
  goal mostly taken, or next to one already given, is given to nobody, and an
  explorer already walking to much the same ground is sent nothing.
- `ModelCoordinator` asks a language model, showing it the same ranking as a
  suggestion (prompts/coordinator.md); it answers in YAML, one directive per
  explorer. An unusable reply is re-prompted once, then the tick sends none.

Its `Post` says where it stands in the team. Under --comm star and tree it is
the explorers' channel: it passes each explorer's message on to the explorers
of its group it concerns (explorer/policies/relay.py), and under tree up to
the system agent where it concerns ground beyond its region. Under a system
agent (explorer/policies/system_agent.py) it directs only its group, and
prefers goals in its region, as the system agent's last word said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import explorer.policies.sentences as sentences
from explorer.model.schemas import directives_schema
from explorer.policies import grid_arrays
from explorer.policies.echoes import repeats_instructions
from explorer.policies.grid_arrays import CellMask
from explorer.policies.grid_map import Goal, GridMap, PoseKey, cell_distance, pose_key, utility
from explorer.policies.model_policy import Ask, ModelPolicy, Syntax
from explorer.policies.relay import Point, passed_on, reaches_beyond, said_in
from explorer.policies.replies import ModelDirective, parse_directives
from explorer.policies.sentences import Box
from explorer.team.hierarchy import read_group
from nodes.decision_context import Cell, CoordinatorContext, Directive, still_to_find, team_goal
from nodes.interfaces import CoordinatorPolicy, Decision, DecisionOutcome
from perception.base import Message, Pose, objects_text
from prompts import how_to_reply, instruction_text, render

CANDIDATES = 6  # goals per explorer the assignment weighs
RETARGET_DISTANCE = 3  # cells: a goal this near the one an explorer is walking to is no news
# A goal is worth walking to while the team has not seen (nor taken) this share of what it would show.
STILL_NEW = 0.5
TARGET_TICKS = 2  # ticks after which a goal not reached is taken to be given up (unreachable, say)
# View distances: a message about a place this near an explorer (or its goal) concerns it. Tuned on
# bench/topology.py's tuned seeds (3, 2, 1.5 and 1 tried): 1.5 keeps star's steps and reads a third of all's.
RELAY_REACH = 1.5
NO_REASON = "the model gave no reason"  # a model's directive without its `reason`


@dataclass(frozen=True)
class Post:
    """Where a coordinator stands in the team."""

    members: tuple[str, ...] | None = None  # its group until the system agent says otherwise; None: every explorer
    relaying: bool = False  # --comm star or tree: it passes on its explorers' messages
    system: str | None = None  # --comm tree: what concerns other groups goes up to the system agent
    first_number: int = 0  # its directives are numbered from here on: each director has its own numbers


class OfflineCoordinator:
    name = "offline"

    def __init__(self, post: Post | None = None) -> None:
        self.take_post(post or Post())
        self.region: Box | None = None  # the ground it works, as the system agent last said
        self.away: frozenset[Cell] = frozenset()  # the cells beyond its region: worth nothing to its goals
        self.map = GridMap()  # what the team has seen
        self.maps: dict[str, GridMap] = {}  # explorer -> what it has seen itself: where it would go alone
        self.poses: dict[str, PoseKey] = {}  # explorer -> where it last reported being
        self.headings: dict[str, PoseKey] = {}  # explorer -> the pose it last said it is heading for
        self.seen_by: dict[str, set[Cell]] = {}  # explorer -> the cells it reported seeing
        self.targets: dict[
            str, tuple[PoseKey, int]
        ] = {}  # explorer -> (the goal last sent to it, the tick it was sent)
        self._decided: tuple[int, DecisionOutcome] | None = None

    def take_post(self, post: Post) -> None:
        """Stand at `post` (before its first tick)."""
        self.post = post
        self.members = post.members  # its group, as the system agent last said; None: every explorer
        self.sent = post.first_number  # directives numbered in order

    def direct(self, context: CoordinatorContext) -> DecisionOutcome:
        if self._decided and self._decided[0] == context.team.step:
            return self._decided[1]  # a retried call
        self.learn(context)
        directives = self.directives(self.assign(context), context.team.step)
        outcome = DecisionOutcome(None, directives=tuple(directives), relayed=tuple(self.pass_on(context)), prompt="")
        self._decided = (context.team.step, outcome)
        return outcome

    def group(self, context: CoordinatorContext) -> tuple[str, ...]:
        """The explorers it directs now."""
        return context.team.members if self.members is None else self.members

    def hear(self, context: CoordinatorContext) -> None:
        """Take the system agent's word: its group and its region (the last said holds)."""
        for message in context.messages:
            said = read_group(message["message"]) if message["sender"] == self.post.system else None
            if said:
                self.members, region = tuple(said[0]), said[1]
                if region and region != self.region and context.team.size:
                    self.region, self.away = region, _beyond(region, context.team.size)
        for explorer in [e for e in self.poses if e not in self.group(context)]:
            del self.poses[explorer]  # moved to another group: no longer its to place or to avoid

    def pass_on(self, context: CoordinatorContext) -> list[Message]:
        """Under star and tree: its explorers' messages to the explorers of its group they concern (and
        up to the system agent where they concern ground beyond its region); the system agent's passed
        down, likewise to its group."""
        if not self.post.relaying:
            return []
        group, system = self.group(context), self.post.system
        said = said_in(context.reports)
        from_above = [
            (m["sender"], m["message"], context.team.step)
            for m in context.messages
            if m["sender"] != system and m["sender"] not in group
        ]
        reach = int(RELAY_REACH * (context.team.view_distance or 1))
        relayed = passed_on(said + from_above, group, self._places(group), reach)
        if system:
            relayed += [
                Message(sender, system, text, step)
                for sender, text, step in said
                if self.region is None or reaches_beyond(text, self.region, reach)
            ]
        return relayed

    def _places(self, group: Sequence[str]) -> dict[str, list[Point]]:
        """Each explorer's place and where it is going, as the coordinator knows them."""
        where: dict[str, list[Point]] = {}
        for explorer in group:
            known = [self.poses.get(explorer), self.headings.get(explorer), self.targets.get(explorer, (None,))[0]]
            where[explorer] = [(pose[0], pose[1]) for pose in known if pose]
        return where

    def learn(self, context: CoordinatorContext) -> None:
        """Take in the reports and the system agent's word (safe to repeat: the map grows by unions, a
        pose is replaced)."""
        size, view_distance = context.team.size, context.team.view_distance
        assert size is not None and view_distance is not None, "a coordinator directs in a grid world"
        self.hear(context)
        for report in context.reports:
            for grid in (self.map, self.maps.setdefault(report.sender, GridMap())):
                grid.learn_view(
                    size, view_distance, Pose.from_dict(report.seen_from), report.seen_cells, report.seen_walls
                )
            self.seen_by.setdefault(report.sender, set()).update(report.seen_cells)
            self.poses[report.sender] = pose_key(Pose.from_dict(report.pose))
            heading = sentences.read_heading(report.said)
            if heading:
                x, y, z, facing = heading
                self.headings[report.sender] = (x, y, z, facing or "north", 0)

    def assign(self, context: CoordinatorContext) -> dict[str, Goal]:
        """{explorer: Goal} for the explorers to redirect: the best explorer-goal pair first, then the
        best of the rest, and so on; the goals of those left alone are taken."""
        if self.map.size is None:
            return {}
        actions = context.available_actions
        away = CellMask.of(self.map.extent, self.away)
        claimed = CellMask(away.array.copy())  # and, as they are taken, the sights of the goals kept or assigned
        candidates: dict[str, list[Goal]] = {}
        for explorer in self.group(context):
            if explorer not in self.poses:
                continue
            theirs = self._teammates_region(explorer)
            own = self._own_goal(explorer, actions, context.team.step, theirs)
            if own is not None:
                grid_arrays.mark(claimed.array, self.map.sight(own))
            else:
                candidates[explorer] = self.map.goals(self.poses[explorer], actions, away, theirs, CANDIDATES)[0]
        assignment: dict[str, Goal] = {}
        # What each goal is worth with nothing claimed, against which what claims leave of it is weighed.
        unclaimed = {goal.pose: self.map.gain(goal.pose)[0] for goals in candidates.values() for goal in goals}
        while candidates:
            best = None
            for explorer, goals in candidates.items():
                for goal in goals:
                    worth, _ = self.map.gain(goal.pose, claimed)
                    if worth < STILL_NEW * unclaimed[goal.pose] or any(
                        cell_distance(goal.pose, g.pose) <= 2 for g in assignment.values()
                    ):
                        continue  # mostly what another explorer will see: not worth sending anyone there
                    if best is None or utility(worth, goal.cost) > best[0]:
                        best = (utility(worth, goal.cost), explorer, goal)
            if best is None:
                break
            _, explorer, goal = best
            assignment[explorer] = goal
            grid_arrays.mark(claimed.array, self.map.sight(goal.pose))
            del candidates[explorer]
        return assignment

    def _teammates_region(self, explorer: str) -> CellMask | None:
        """Cells nearer (by path, on the team's map) another explorer than this one: the explorers'
        own split of the ground, which the coordinator keeps."""
        others = [pose[:3] for other, pose in self.poses.items() if other != explorer]
        return self.map.nearer_others(self.poses[explorer][:3], others) if others else None

    def _own_goal(self, explorer: str, actions: Sequence[str], tick: int, theirs: CellMask | None) -> PoseKey | None:
        """The pose the explorer is heading for (the coordinator's goal, or the one it would choose
        itself), if the team has not seen most of what it shows; None when it should be redirected."""
        pose = self.poses[explorer]
        target, sent = self.targets.get(explorer, (None, 0))
        if target and (pose[:3] == target[:3] or tick - sent > TARGET_TICKS):
            del self.targets[explorer]  # reached, or given up
            target = None
        heading = self.headings.get(explorer)
        if target:
            goal = target  # still walking to its directive
        elif heading and heading[:3] != pose[:3]:
            goal = heading  # where it said it is going
        else:
            own = self.maps[explorer].goals(pose, actions, theirs=theirs)[0] if explorer in self.maps else []
            if not own:
                return None
            goal = own[0].pose
        expected = len(self.maps[explorer].unseen(self.maps[explorer].sight(goal))) if explorer in self.maps else 0
        still_new = len([cell for cell in self.map.unseen(self.map.sight(goal)) if cell not in self.away])
        return goal if expected and still_new >= STILL_NEW * expected else None

    def directives(self, assignment: Mapping[str, Goal], tick: int) -> list[Directive]:
        """The directives worth sending for an assignment, numbered; each explorer's target remembered."""
        sent = []
        for explorer, goal in assignment.items():
            target, _ = self.targets.get(explorer, (None, None))
            if target and cell_distance(target, goal.pose) < RETARGET_DISTANCE:
                continue  # on its way to much the same ground
            self.targets[explorer] = (goal.pose, tick)
            sent.append(self.directive(explorer, _goal_reason(goal), goal.pose[:4]))
        return sent

    def directive(
        self,
        explorer: str,
        reason: str,
        target: Sequence[int | str | None] | None = None,
        action: str | None = None,
    ) -> Directive:
        self.sent += 1
        return Directive(
            id=self.sent,
            to=explorer,
            kind="action" if action else "goal",
            target=action or list(target or ()),
            message=sentences.directive(self.sent, target, action),
            reason=reason,
        )


class ModelCoordinator:
    """`ask(prompt) -> Reply` is the model, as for ModelPolicy."""

    def __init__(self, name: str, ask: Ask, constrained: bool = False, syntax: Syntax | None = None) -> None:
        self.name = name
        self.model = ModelPolicy(name, ask, constrained, syntax)
        self.planner = OfflineCoordinator()  # the map, the explorers' poses and the suggested assignment
        self._decided: tuple[int, DecisionOutcome] | None = None

    def direct(self, context: CoordinatorContext) -> DecisionOutcome:
        if self._decided and self._decided[0] == context.team.step:
            return self._decided[1]  # a retried call: the model is not asked twice
        self.planner.learn(context)
        about, actions = context.team, context.available_actions
        team, size, found = about.members, about.size, about.discoveries
        assert size is not None, "a coordinator directs in a grid world"
        prompt = render(
            "coordinator",
            team_size=len(team),
            world=about.world,
            team_goal=team_goal(about),
            how=how_to_reply(self.model.syntax()),
            step=about.step,
            max_steps=about.max_steps,
            size="x".join(map(str, size)),
            explorers=self._explorer_lines(context, self.planner.assign(context)),
            team_objects=(
                objects_text(list(found), {n: f["cell"] for n, f in found.items() if f.get("cell")}) or "Nothing yet."
            )
            + still_to_find(about),
            actions=", ".join(actions),
        )
        choices = f"`directives`: a mapping from {', '.join(team)} to a `goal` [x, y, level] or an `action` ({', '.join(actions)})"
        outcome, given = self.model.ask_for(
            prompt,
            lambda text: (Decision(""), parse_directives(text, team, actions, size)),
            choices,
            schema=directives_schema(team, actions, size),
        )
        given, outcome = _without_echoed_reasons(given or [], outcome, instruction_text(prompt))
        directives = []
        for explorer, target, action, reason in given:
            if target:
                self.planner.targets[explorer] = (target[:3] + (target[3] or "north", 0), about.step)
            directives.append(self.planner.directive(explorer, reason or NO_REASON, target, action))
        relayed = tuple(self.planner.pass_on(context))
        outcome = replace(outcome, decision=None, directives=tuple(directives), relayed=relayed)
        self._decided = (about.step, outcome)
        return outcome

    def _explorer_lines(self, context: CoordinatorContext, suggested: Mapping[str, Goal]) -> str:
        lines = []
        for explorer in context.team.members:
            pose = self.planner.poses.get(explorer)
            if pose is None:
                lines.append(f"- {explorer}: has not reported yet")
                continue
            covered, _ = sentences.covered(self.planner.seen_by.get(explorer, ()))
            goal = suggested.get(explorer)
            suggestion = (
                f" Suggested: goal [{goal.pose[0]}, {goal.pose[1]}, {goal.pose[2]}] facing {goal.pose[3]}, "
                f"{goal.steps} steps away, about {goal.new_cells} unseen cells."
                if goal
                else " No change suggested: its own way still shows ground the team has not seen."
            )
            lines.append(
                f"- {explorer}: at ({pose[0]}, {pose[1]}, {pose[2]}) facing {pose[3]}. "
                f"{covered or 'Has covered little yet.'}{suggestion}"
            )
        return "\n".join(lines)


def _without_echoed_reasons(
    given: list[ModelDirective], outcome: DecisionOutcome, instructions: str
) -> tuple[list[ModelDirective], DecisionOutcome]:
    """The directives with each reason that gives back `instructions` left out, and the outcome whose last call
    (the reply read) names them, as `directives.EXPLORER.reason`."""
    echoed = [explorer for explorer, *_, reason in given if repeats_instructions(reason, instructions)]
    if not echoed:
        return given, outcome
    kept = [(explorer, goal, action, "" if explorer in echoed else reason) for explorer, goal, action, reason in given]
    *earlier, read = outcome.model_calls
    named = tuple(f"directives.{explorer}.reason" for explorer in echoed)
    return kept, replace(outcome, model_calls=(*earlier, replace(read, echoed=named)))


def _goal_reason(goal: Goal) -> str:
    """Why the offline coordinator sends an explorer to `goal` (the assignment's rule, in words)."""
    steps = "1 step" if goal.steps == 1 else f"{goal.steps} steps"
    return (
        f"its own way would show little the team has not seen; from there it would see about {goal.new_cells} "
        f"unseen cells, {steps} away: the best goal left for it by unseen cells per step, the others' goals taken"
    )


def _beyond(region: Box, size: Sequence[int]) -> frozenset[Cell]:
    """The cells of a world of `size` (W, D, H) outside `region`."""
    x0, x1, y0, y1 = region
    width, depth, height = size
    return frozenset(
        (x, y, z)
        for x in range(width)
        for y in range(depth)
        for z in range(height)
        if not (x0 <= x <= x1 and y0 <= y <= y1)
    )


def take_post(policy: CoordinatorPolicy, post: Post) -> CoordinatorPolicy:
    """The coordinator `policy` standing at `post` in the team."""
    planner = policy.planner if isinstance(policy, ModelCoordinator) else policy
    if isinstance(planner, OfflineCoordinator):
        planner.take_post(post)
    return policy
