"""From Inspect logs to results: which logs of a folder count (`logs`), what a read of them left
out (`evidence`, returned by the readers), and a run's results as written (summary.json,
tables/*.csv, headlines). No statistics of their own (`core.stats`) and no running (`core.runs`)."""
