"""Procedural world families: generators of world files, deterministic in a seed (catalogue.py lists them)."""
