"""One run and its records: set-up, the run directory, the trace, the summary, recovery."""
