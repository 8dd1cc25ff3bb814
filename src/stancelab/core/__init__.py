"""What every probe shares, split by concern (ARCHITECTURE.md is the map):

- `stats`: intervals, paired comparisons, power, the looks of `--until-ci` (numbers in, numbers out)
- `data`: validated data files, the shared topic key, model aliases
- `embedded`: the embedded offline model, its Inspect provider and server
- `results`: from Inspect logs to results (which logs count, the evidence, summary.json, text)
- `runs`: running a probe (options, the pipeline, evals, shards, workers, planning)
- `probe`: the one interface each probe exports; `errors`, `values`, `tether` and
  `inspect_private` (the only door to Inspect's private names) serve all of them.

Core imports no probe; the probes import core; the registry and the CLI sit above both."""
