"""run.log: every line the run logs, cleaned as the console cleans what it shows."""

import json
import re

from explorer.config.run_config import RunConfig
from explorer.model.client import Reply
from explorer.policies.model_policy import ModelPolicy
from explorer.run.runner import ExplorationRun

# A window title set, the screen cleared, a hyperlink disguised as "click here", a C1 "CSI" in red.
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil.example/\x1b\\click here\x1b]8;;\x1b\\\x9b31m"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def test_escape_codes_from_a_world_and_a_model_reply_never_reach_run_log(tmp_path, embedder):
    world = tmp_path / "world.yaml"
    world.write_text(
        f"name: {json.dumps('hall' + ESCAPES)}\nsize: [4, 3]\n"
        f"objects: [{{name: {json.dumps('cup' + ESCAPES)}, position: [2, 1]}}]\n"
        "agents: [{position: [0, 1], facing: east}, {position: [0, 0], facing: east}]\n"
    )
    # Words of its own after the codes: a message mostly the world's name would be an echo, left out unsent.
    message = "hello" + ESCAPES + " from Agent1, heading north to the kitchen to look for the lost cups"
    reply = f"action: forward\nmessage_to_others: {json.dumps(message)}\n"

    def factory(profile, agent_id, config, gate):
        return ModelPolicy("stub", lambda prompt: Reply(reply, "stub"))

    config = RunConfig.of(run_dir=tmp_path / "run", world=world, steps=3, verbosity=-1)
    ExplorationRun(config.check(), embedder=embedder, policy_factory=factory).execute()
    log = (tmp_path / "run" / "run.log").read_text(encoding="utf-8")
    for said in ("hall", "cup", "hello"):  # each was logged: the world, the find, the message
        assert f"{said}]0;pwned[2J]8;;http://evil.example/\\click here]8;;\\31m" in log
    assert not CONTROL.findall(log)
