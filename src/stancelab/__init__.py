"""stancelab: measure what LLMs 'believe' on contested questions and what moves them."""

__version__ = "0.1.0"
