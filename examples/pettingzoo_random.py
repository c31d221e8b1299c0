"""A random baseline in the PettingZoo environment: three explorers in a generated house, 300 steps."""

from explorer.envs.pettingzoo_env import ExplorationParallelEnv

env = ExplorationParallelEnv(world="gen:house", world_seed=3, agents=3, seed=7, steps=300, comm=False)
observations, infos = env.reset()
for number, agent in enumerate(env.agents):
    env.action_space(agent).seed(number)  # the same actions on every run
totals = dict.fromkeys(env.agents, 0.0)
found = [name for info in infos.values() for name in info["new_objects"]]  # in sight at the start
steps = 0
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
    steps += 1
    for agent, reward in rewards.items():
        totals[agent] += reward
    found += [name for info in infos.values() for name in info["new_objects"]]
print(f"steps: {steps}")
for agent, total in totals.items():
    print(f"{agent} total reward: {total:.1f}")
print(f"objects found: {len(found)} of {len(env.world.objects)}")
