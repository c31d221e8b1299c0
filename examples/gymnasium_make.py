"""The single-agent view through gymnasium.make, with the built-in explorer acting in it: a generated house of
40 x 30 cells, the explorer placed by the reset's seed; after 60 steps, its map as text."""

import gymnasium

from explorer.envs.app_policies import AppPolicies

env = gymnasium.make(
    "explorer.envs.gymnasium_env:multi_agent_explorer/Explore-v0",  # imports the module, which registers the id
    world="gen:house?size=40x30",
    steps=60,
    render_mode="ansi",  # or "rgb_array": the map as an image, height x width x 3 uint8
)
explorer = AppPolicies(env.unwrapped, "offline")
observation, info = env.reset(seed=3)
total, truncated = 0.0, False
while not truncated:
    observation, reward, terminated, truncated, info = env.step(explorer.action())
    total += reward
print(f"total reward: {total:.1f}")
print(env.render())
