"""Decision backends behind one seam: `complete(prompt, context) -> Reply`.

Every backend answers with reply text that goes through the same parser, so
the offline and random baselines exercise the path a language model takes.
"""

from __future__ import annotations

import hashlib
import random

from explorer import llm
from explorer.llm import AuthenticationFailed, LLMError, Reply
from explorer.offline import OfflineExplorer
from explorer.replies import Decision
from perception.unity import Sight

OFFLINE, RANDOM = "offline", "random"
BUILT_IN = (OFFLINE, RANDOM)


def stable_seed(*parts) -> int:
    """A seed that is the same on every run and platform (unlike hash())."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


class RandomBackend:
    """A uniformly random available action each step: the baseline."""

    def __init__(self, seed):
        self.seed = seed

    def complete(self, prompt, context):
        # Seeded by step, so a retried call gives the same answer.
        rng = random.Random(stable_seed(self.seed, context["step"]))
        action = rng.choice(context["available_actions"])
        return Reply(Decision(action=action, reason="random baseline").to_yaml(), RANDOM)


class LiteLLMBackend:
    def __init__(self, settings):
        self.settings = settings

    def complete(self, prompt, context):
        return llm.complete_prompt(self.settings, prompt)


def make_backend(profile, agent_id, config, gate=None):
    """The backend an agent's profile asks for; `config` gives the run's seed and model settings,
    `gate` the semaphore that bounds the run's model calls in flight."""
    agent_seed = stable_seed(config.seed, agent_id)
    if profile.model == OFFLINE:
        return OfflineExplorer(agent_seed)
    if profile.model == RANDOM:
        return RandomBackend(agent_seed)
    return LiteLLMBackend(llm_settings(profile, config, gate))


def llm_settings(profile, config, gate=None):
    return llm.LLMSettings(
        model=profile.model,
        api_base=config.api_base,
        temperature=profile.temperature,
        timeout=config.timeout,
        price_in=config.price_in,
        price_out=config.price_out,
        gate=gate,
    )


def make_vision(profile, config, gate=None):
    """`look(png_path) -> Sight` with the profile's model; a failed call is an empty Sight with its error."""
    settings = llm_settings(profile, config, gate)

    def look(image_path):
        replies, caption = [], ""
        try:
            if config.vision == "split":  # the spec's two calls
                caption, reply = llm.caption_image(settings, image_path)
                replies.append(reply)
                objects, reply = llm.extract_objects_from_image(settings, image_path)
            else:
                caption, objects, reply = llm.describe_image(settings, image_path)
            replies.append(reply)
        except AuthenticationFailed:
            raise  # every later call would fail the same way: stop the run
        except LLMError as failure:
            return Sight(caption, (), tuple(replies), errors=(f"vision failed: {failure}",))
        return Sight(caption, tuple(objects), tuple(replies))

    return look
