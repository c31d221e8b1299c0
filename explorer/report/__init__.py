"""Pages a person reads: a run's report.html, a sweep's sweep.html."""
