"""Standard JSON for every ``--json`` output and summary file: NumPy values converted and
non-finite numbers written as ``null`` (``NaN``/``Infinity`` are not JSON; strict parsers
such as JavaScript's reject them)."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

__all__ = ["dumps", "json_safe"]


def json_safe(o: Any) -> Any:
    """A copy of ``o`` with dict keys as strings, tuples and arrays as lists, NumPy scalars
    as Python numbers and NaN or infinite floats as ``None``."""
    if isinstance(o, dict):
        return {str(k): json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [json_safe(v) for v in o]
    if isinstance(o, np.ndarray):
        return [json_safe(v) for v in o.tolist()]
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, (float, np.floating)):
        x = float(o)
        return x if math.isfinite(x) else None
    return o


def dumps(o: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`json_safe` ``(o)``; never writes ``NaN`` or ``Infinity``."""
    return json.dumps(json_safe(o), allow_nan=False, **kwargs)
