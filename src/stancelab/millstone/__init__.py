"""MillStone: open-mindedness of LLMs to in-context arguments (Triedman & Shmatikov, 2025)."""
