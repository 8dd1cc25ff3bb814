"""Political even-handedness: paired prompts graded for equal help, refusals and hedging."""
