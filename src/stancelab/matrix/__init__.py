"""The topic x lens matrix: every probe's stance per model and shared topic, side by side,
and whether the lenses point the same way. Above `core` and the probes."""
