"""Values as summary.json holds them, and an options field's default value."""

from __future__ import annotations

import math
from dataclasses import MISSING, Field
from typing import Any


def json_safe(value: Any) -> Any:
    """A value fit for summary.json: numpy scalars unwrapped, NaN as null, floats rounded."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    return value


def field_default(item: Field[Any]) -> Any:
    """A dataclass field's default value (its factory's product), None without one."""
    if item.default is not MISSING:
        return item.default
    if item.default_factory is not MISSING:
        return item.default_factory()
    return None
