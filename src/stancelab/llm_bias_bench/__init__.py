"""llm-bias-bench: opinion bias and sycophancy via simulated-user persuasion (Nogueira et al., 2026)."""
