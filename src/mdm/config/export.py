"""Write, flatten and compare GPU configurations.

:func:`save_gpu` writes every field of a :class:`GPUConfig` (defaults included) to a
TOML, YAML or JSON file that :func:`mdm.config.load_gpu` reads back to an equal
configuration: an imported ``gpgpusim.config`` becomes a file to edit and pass to
``--gpu``. Fields that are ``None`` (``l1.unified_bytes``, ``noc.sm_port_gbps``: ``None``
is their default, a rule of their own) are ``null`` in JSON; TOML has no null, so TOML
and YAML list them, with their meaning, in comments at the end. :func:`flat_fields` and
:func:`diff_gpus` give the dotted fields ``with_updates`` and sweep grids use, and
:func:`derived_values` the quantities the cache simulator and the models compute from
them (core cycles, bytes per cycle, cache geometry).
"""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import tomli_w
import yaml

from mdm._atomic import atomic_write_bytes
from mdm.config.gpu import GPUConfig, dotted_fields
from mdm.errors import ConfigError

__all__ = [
    "config_dict",
    "derived_values",
    "diff_gpus",
    "dumps_gpu",
    "flat_fields",
    "save_gpu",
    "unset_fields",
]

FORMATS = (".toml", ".yaml", ".yml", ".json")


def config_dict(gpu: GPUConfig, *, keep_none: bool = False) -> dict[str, Any]:
    """Every field of ``gpu`` as nested plain values (tuples as lists); ``None`` left out
    unless ``keep_none``."""
    return gpu.model_dump(mode="json", exclude_none=not keep_none)


def unset_fields(gpu: GPUConfig) -> dict[str, str]:
    """The dotted fields of ``gpu`` that are ``None``, each with its description."""
    out = {}
    for name in (k for k, v in flat_fields(gpu).items() if v is None):
        model: Any = gpu
        *tables, field = name.split(".")
        for t in tables:
            model = getattr(model, t)
        out[name] = type(model).model_fields[field].description or ""
    return out


def _unset_comments(gpu: GPUConfig) -> str:
    unset = unset_fields(gpu)
    if not unset:
        return ""
    lines = ["", "# Unset (None) fields; set one in its table to override its rule:"]
    for name, what in unset.items():
        lines += textwrap.wrap(f"{name}: {what}", 88, initial_indent="# ", subsequent_indent="#   ")
    return "\n".join(lines) + "\n"


def dumps_gpu(gpu: GPUConfig, fmt: str = ".toml", header: str = "") -> str:
    """``gpu`` as the text of a ``fmt`` file (``.toml``, ``.yaml``/``.yml``, ``.json``);
    ``header`` (TOML and YAML only) becomes comment lines at the top."""
    data = config_dict(gpu)
    if fmt == ".toml":
        text = tomli_w.dumps(data)
    elif fmt in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False)
    elif fmt == ".json":
        return json.dumps(config_dict(gpu, keep_none=True), indent=2) + "\n"
    else:
        raise ConfigError(None, f"unknown configuration format {fmt!r}: use one of {FORMATS}")
    comments = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines())
    return comments + text + _unset_comments(gpu)


def save_gpu(gpu: GPUConfig, path: str | Path, header: str = "") -> Path:
    """Write ``gpu`` to ``path`` (format by suffix, :data:`FORMATS`) atomically."""
    path = Path(path)
    if path.suffix not in FORMATS:
        raise ConfigError(path, f"configuration files end in {', '.join(FORMATS)}")
    atomic_write_bytes(path, dumps_gpu(gpu, path.suffix, header).encode())
    return path


def flat_fields(gpu: GPUConfig) -> dict[str, Any]:
    """Every field as ``{"l1.mshr_entries": 128, ...}`` (dotted paths, ``None`` kept)."""
    return dotted_fields(gpu.model_dump(mode="json"))


def diff_gpus(a: GPUConfig, b: GPUConfig) -> list[tuple[str, Any, Any]]:
    """``(field, value in a, value in b)`` for every field that differs, in schema order;
    floats within a relative 1e-12 of each other are equal (an imported latency
    computed in another order: 150.17667844522967 against 150.1766784452297 ns)."""
    fa, fb = flat_fields(a), flat_fields(b)
    return [(k, fa[k], fb[k]) for k in fa if not _same(fa[k], fb[k])]


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-12)
    return bool(x == y)


def derived_values(gpu: GPUConfig) -> dict[str, float | int]:
    """What the cache simulator and the models compute from the fields: latencies in
    core cycles, bandwidths in bytes per core cycle and the NoC bandwidth all SMs can
    draw (:meth:`GPUConfig.noc_gbps`), cache sets."""
    return {
        "l1_sets": gpu.l1.sets,
        "l2_sets_per_bank": gpu.l2.sets_per_bank,
        "l2_hit_latency_cycles": gpu.l2_hit_latency_cycles,
        "dram_latency_cycles": gpu.dram_latency_cycles,
        "noc_latency_cycles": gpu.noc_latency_cycles,
        "noc_effective_gbps": gpu.noc_effective_gbps,
        "noc_effective_bytes_per_cycle": gpu.noc_effective_gbps / gpu.core_clock_ghz,
        "dram_bytes_per_cycle": gpu.dram_bytes_per_cycle,
    }
