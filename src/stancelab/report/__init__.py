"""The HTML report: a model's five profiles side by side, per-method plots, transcripts, cost."""
