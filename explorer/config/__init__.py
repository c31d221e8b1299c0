"""What a run is asked to do: its options, checked, and the agents' profiles."""
