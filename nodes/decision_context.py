"""What a decision rests on: the context every policy reads, and the prompt a model reads."""

from perception.actions import ACTION_HELP
from perception.base import Pose, objects_text
from prompts import render

RECENT_ACTIONS = 5
# The prompt's budget: whatever the step, team size or world, it holds at most
# this much, so the request at step 200 is the size of the one at step 10.
PROMPT_MESSAGES = 6  # the newest; older ones are counted, not shown
PROMPT_TEAM_OBJECTS = 30  # the latest found
PROMPT_TEAMMATES = 8  # the nearest; the others are counted
MEMORY_CHARS = 300  # per retrieved memory
MESSAGE_CHARS = 300
CAPTION_CHARS = 600


def team_context(shared):
    """What every member's decision rests on, an explorer's or a coordinator's: who, when, where."""
    env = shared["environment"]
    return {
        "agent_id": shared["agent_id"],
        "team": shared["team"],
        "step": shared["step_count"],
        "max_steps": shared["max_steps"],
        "world": env.name,
        "size": env.size,
        "view_distance": env.view_distance,
        "team_objects": shared["shared_memory"].discoveries(),  # name -> {finder, step, cell}, in discovery order
    }


def decision_context(shared):
    """Everything the decision rests on; the prompt and the offline explorer both read it."""
    store = shared["shared_memory"]
    agent_id = shared["agent_id"]
    observation = shared["observation"]
    return {
        **team_context(shared),
        "role": shared["role"],
        "persona": shared["persona"],
        "dead_reckoned": shared["environment"].dead_reckoned,
        "pose": observation.pose.to_dict(),
        "visible_objects": list(observation.visible_objects),
        "object_cells": dict(observation.object_cells),
        "caption": observation.caption,
        "seen_cells": observation.seen_cells,
        "seen_walls": observation.seen_walls,
        "actions_unseen": list(observation.actions_unseen),
        "memories": shared["retrieved_memories"],
        "messages": shared["other_agent_messages"],
        "other_agents": {a: p for a, p in store.positions().items() if a != agent_id},
        "recent_actions": shared["action_history"][-RECENT_ACTIONS:],
        "available_actions": list(shared["perception"].available_actions(agent_id)),
        "comm_enabled": shared["comm_enabled"],
        "coordinator": shared["coordinator"],
    }


def render_prompt(context, reply=None):
    """The decision prompt; `reply` is its closing section (how to answer), the action reply by default."""
    if reply is None:
        reply = render("reply_actions", comm_note=comm_note(context))
    return render(
        "decision",
        agent_id=context["agent_id"],
        role=context["role"],
        persona=context["persona"],
        team_size=len(context["team"]),
        world=context["world"],
        max_steps=context["max_steps"],
        step=context["step"],
        pose=_pose_text(context["pose"]),
        pose_note=_pose_note(context),
        visible=_clip(context["caption"], CAPTION_CHARS),
        memories=_lines([f"{_clip(text, MEMORY_CHARS)} (distance {d:.2f})" for text, d in context["memories"]], "Nothing yet."),
        messages=_messages_text(context["messages"]),
        team_objects=_latest(_found_text(context["team_objects"]), PROMPT_TEAM_OBJECTS),
        other_agents=_teammates_text(context["pose"], context["other_agents"]),
        recent_actions=_lines(
            [f"step {a['step']}: {a['action']} -> {a['outcome']}: {a['detail']}" for a in context["recent_actions"]],
            "None yet: this is your first step.",
        ),
        actions="\n".join(f"- {a}: {ACTION_HELP.get(a, '')}" for a in context["available_actions"]),
        reply=reply.strip(),
    )


def comm_note(context):
    return render("comm_on" if context["comm_enabled"] else "comm_off").strip()


def _messages_text(messages):
    shown = [f"{m['sender']}: {_clip(m['message'], MESSAGE_CHARS)}" for m in messages[-PROMPT_MESSAGES:]]
    hidden = len(messages) - len(shown)
    text = _lines(shown, "No messages from other agents")
    return f"{text}\n({hidden} older messages this step not shown)" if hidden else text


def _teammates_text(pose, others):
    """Where the nearest teammates are, in team order; how many others there are."""
    known = {a: p for a, p in others.items() if p}
    here = pose["position"]
    nearest = sorted(known, key=lambda a: sum(abs(c - h) for c, h in zip(known[a]["position"], here)))[:PROMPT_TEAMMATES]
    shown = [a for a in others if a in nearest]
    text = _lines([f"{a}: {_pose_text(others[a])}" for a in shown], "You are alone.")
    hidden = len(others) - len(shown)
    return f"{text}\n({hidden} more teammates farther away)" if hidden else text


def _found_text(discoveries):
    cells = {name: found["cell"] for name, found in discoveries.items() if found.get("cell")}
    return [objects_text([name], cells) for name in discoveries]


def _latest(names, limit):
    if not names:
        return "Nothing yet."
    shown = ", ".join(names[-limit:])
    return f"{shown} (and {len(names) - limit} found earlier)" if len(names) > limit else shown


def _clip(text, limit):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pose_note(context):
    if context["dead_reckoned"]:
        return render("pose_dead_reckoned").strip()
    return render(
        "pose_grid",
        size="x".join(map(str, context["size"])) if context["size"] else "of unknown size",
        view_distance=context["view_distance"] or "a few",
    ).strip()


def _pose_text(pose):
    return Pose.from_dict(pose).describe()


def _lines(items, empty):
    return "\n".join(f"- {item}" for item in items) if items else empty
