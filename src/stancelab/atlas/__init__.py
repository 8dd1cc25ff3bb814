"""The released-data atlas: the authors' released data of several papers imported at once,
one row per model across papers (`core.data.aliases`), the topic x lens matrix per model and the
cross-paper findings (`stancelab atlas`)."""
