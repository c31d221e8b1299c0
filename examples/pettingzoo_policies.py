"""The built-in explorer, the random baseline and a policy of your own, each as a team of three in the
PettingZoo environment: the same generated house, seed and steps; the objects each team finds."""

from explorer.envs.app_policies import AppPolicies
from explorer.envs.pettingzoo_env import ExplorationParallelEnv

for model in ("offline", "random", "examples.run_from_python:Wanderer"):
    env = ExplorationParallelEnv(world="gen:house", world_seed=3, agents=3, seed=7, steps=100)
    team = AppPolicies(env, model)  # each agent's policy, made and asked as a run's are
    observations, infos = env.reset()
    found = [name for info in infos.values() for name in info["new_objects"]]  # in sight at the start
    while env.agents:
        observations, rewards, terminations, truncations, infos = env.step(team.actions())
        found += [name for info in infos.values() for name in info["new_objects"]]
    print(f"{model}: {len(found)} of {len(env.world.objects)} objects found in {env.episode.taken} steps")
