"""Shared core: data loading, statistics, the embedded model, model roles and the CLI."""
