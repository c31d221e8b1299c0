"""Experiment sweeps: a grid of runs from a file, their results and intervals."""
