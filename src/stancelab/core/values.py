"""Values as summary.json holds them."""

from __future__ import annotations

import math
from typing import Any


def json_safe(value: Any) -> Any:
    """A value fit for summary.json: numpy scalars unwrapped, NaN as null, floats rounded."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    return value
