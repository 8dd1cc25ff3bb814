"""Data files and identities: validated loading of JSONL and CSV files (pydantic), the shared
topic key with its stance frame, and model aliases across sources. No model calls, no logs."""
