"""The classical multi-robot explorers: frontier planners on one map the team shares (docs/baselines.md)."""
