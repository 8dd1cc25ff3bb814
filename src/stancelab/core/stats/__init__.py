"""Statistics: intervals over units, paired comparisons between models, power and sample size,
and the sequential looks of `--until-ci`. Plain functions over numbers and frames; nothing here
runs a model, reads a log or knows a probe."""
