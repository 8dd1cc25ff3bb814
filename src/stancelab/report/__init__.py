"""The HTML report: a model's profile on every lens side by side, per-method plots, transcripts, cost."""
