"""IssueBench: issue bias in realistic writing-assistance prompts (Röttger et al., 2025)."""
