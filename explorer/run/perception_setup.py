"""Choosing and checking a run's perception backend before anything runs.

Every start-up problem is raised here as a one-line error, before the run
directory is written: a bad world file in mock mode; in Unity mode a model that
cannot see, no display, no or several matching windows, a bad key map or region.
"""

from __future__ import annotations

from explorer.model.client import sees_images
from explorer.model.vision import make_vision
from explorer.policies.built_in import decides_in_code
from explorer.records.errors import ConfigError
from explorer.run.policy_factory import model_settings
from perception.families.generate import open_world
from perception.keymap import DEFAULT_KEYMAP, load_keymap
from perception.mock import MockPerception
from perception.unity import AgentView, UnityPyAutoGUIPerception
from perception.windows import find_window

SCREENSHOT_DIR = "screenshots"


class MockSetup:
    """A world from a YAML file."""

    def __init__(self, config):
        self.config = config
        self.world = open_world(config.episode.world, config.episode.world_seed, config.episode.find)
        self.default_steps = self.world.max_steps
        self.warnings = []

    def start(self, store, agent_ids, run_dir, gate):
        return MockPerception(self.world, store, agent_ids, self.config.episode.seed, self.config.episode.random_starts)


class UnitySetup:
    """A game window per agent (or one shared, split by regions), its key map and its vision model.

    Only the agents this process runs (`local`) need their windows here: a team
    split across machines plays one game client on each.
    """

    default_steps = None

    def __init__(self, config, profiles, agent_ids, local):
        from perception.keyboard import Keyboard  # pyautogui: see below

        self.config = config
        per_agent = zip(
            agent_ids,
            profiles,
            config.team.per_agent(config.window.window_titles),
            config.team.per_agent(config.window.keymaps, DEFAULT_KEYMAP),
            config.team.per_agent(config.window.regions),
        )
        here = [settings for settings in per_agent if settings[0] in local]
        self.profiles = {agent_id: profile for agent_id, profile, *_ in here}
        self.warnings = _vision_warnings(self.profiles)
        windows = {title: find_window(title) for title in dict.fromkeys(title for _, _, title, _, _ in here)}
        # pyautogui binds to the display when imported, so only now that one answered.
        self.keyboard = Keyboard()
        keymaps = {
            path: load_keymap(path, self.keyboard.is_valid_key) for path in dict.fromkeys(k for *_, k, _ in here)
        }
        if config.window.pause_key is not None and not self.keyboard.is_valid_key(config.window.pause_key):
            raise ConfigError(
                f"--pause-key: unknown key name {config.window.pause_key!r} (pyautogui's key names: p, space, esc, f1, ...)"
            )
        self.views = {}
        for agent_id, _, title, keymap, region in here:
            window = windows[title]
            _check_region(region, window)
            self.views[agent_id] = AgentView(window, keymaps[keymap], region)

    def start(self, store, agent_ids, run_dir, gate):
        split = self.config.window.vision == "split"
        look = {
            agent_id: make_vision(model_settings(profile, self.config, agent_id, gate), split)
            for agent_id, profile in self.profiles.items()
        }
        screenshots = run_dir / SCREENSHOT_DIR
        screenshots.mkdir(parents=True, exist_ok=True)
        return UnityPyAutoGUIPerception(
            store, self.views, self.keyboard, look, screenshots, team=agent_ids, pause_key=self.config.window.pause_key
        )


def perception_setup(config, profiles, agent_ids, local=None):
    """The checked setup for the run's mode (for the `local` agents, all by default); raises ConfigError,
    WorldError, WindowError or KeyMapError."""
    if config.episode.mode == "unity":
        return UnitySetup(config, profiles, agent_ids, agent_ids if local is None else local)
    return MockSetup(config)


def _vision_warnings(profiles):
    """Refuses models that cannot see ({agent_id: profile}); warns about models litellm does not know."""
    warnings = []
    for agent_id, profile in profiles.items():
        if decides_in_code(profile.model):
            raise ConfigError(
                f"{agent_id}'s model {profile.model!r} cannot see the game: Unity mode needs a vision model, "
                "e.g. --model gpt-4o-mini, or --model openai/<name> --api-base URL for a local server"
            )
        sees = sees_images(profile.model)
        if sees is False:
            raise ConfigError(
                f"{agent_id}'s model {profile.model!r} cannot read images, as litellm's model table says: "
                "choose a vision model, e.g. gpt-4o-mini"
            )
        if sees is None:
            warnings.append(
                f"litellm does not know whether {profile.model!r} can read images; "
                "if it cannot, the agents will see nothing"
            )
    return list(dict.fromkeys(warnings))


def _check_region(region, window):
    if region is None:
        return
    x, y, width, height = region
    if x + width > window.width or y + height > window.height:
        raise ConfigError(
            f"--region {x},{y},{width},{height} does not fit in the window {window.title!r}, "
            f"which is {window.width}x{window.height}"
        )
