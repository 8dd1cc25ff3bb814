"""Running a probe: its options (flags and run.toml), the pipeline of a run (validate, plan,
execute, analyse, compare, write), Inspect evals and their settings, shards and worker processes,
model strings and roles, and call planning (`stancelab estimate`). Statistics live in `core.stats`,
reading logs in `core.results`, the embedded model in `core.embedded`."""
