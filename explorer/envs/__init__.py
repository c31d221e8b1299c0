"""The mock worlds as environments for reinforcement learning (the optional extra `envs`): a PettingZoo
`ParallelEnv` for the team (pettingzoo_env.py), a Gymnasium `Env` for one explorer (gymnasium_env.py)."""
