"""Built-in synthetic workloads: deterministic Pascal SASS traces that need no GPU.

``generate(name, seed=0, **params)`` returns an :class:`~mdm.traces.model.AppTrace`
(memcpy commands for the input arrays, then the kernels); :data:`WORKLOADS` lists
every generator with its default size parameters and its memory-divergence class
(``MD`` / ``NMD``, as in paper 001 Table IV). Defaults give roughly 50k-500k warp
instructions; the size parameters scale them up.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload
from urllib.parse import parse_qsl

from mdm.errors import ConfigError, MdmError
from mdm.traces.model import AnyApp, AppTrace
from mdm.traces.workloads.dense import gemm_tiled, stencil2d, transpose
from mdm.traces.workloads.irregular import bfs, spmv_csr
from mdm.traces.workloads.streaming import gather, kmeans, stride, vecadd


class WorkloadError(MdmError, ValueError):
    """Unknown workload, unknown parameter or out-of-range parameter value."""


@dataclass(frozen=True)
class WorkloadSpec:
    """A built-in workload: ``build(seed, **params)`` -> :class:`AppTrace`."""

    name: str
    description: str
    md_class: str
    build: Callable[..., AppTrace]
    params: dict[str, int | float] = field(default_factory=dict)


def _spec(name: str, md_class: str, fn: Callable[..., AppTrace]) -> WorkloadSpec:
    sig = inspect.signature(fn)
    params = {
        p.name: p.default
        for p in sig.parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    doc = (fn.__doc__ or "").strip().splitlines()[0]
    return WorkloadSpec(name=name, description=doc, md_class=md_class, build=fn, params=params)


WORKLOADS: dict[str, WorkloadSpec] = {
    s.name: s
    for s in (
        _spec("vecadd", "NMD", vecadd),
        _spec("stride", "MD", stride),
        _spec("spmv_csr", "MD", spmv_csr),
        _spec("bfs", "MD", bfs),
        _spec("kmeans", "MD", kmeans),
        _spec("stencil2d", "NMD", stencil2d),
        _spec("gemm_tiled", "NMD", gemm_tiled),
        _spec("gather", "MD", gather),
        _spec("transpose", "NMD", transpose),
    )
}


def md_class_of(name: str, **params: int | float) -> str:
    """MD/NMD class of a workload instance (``stride`` is NMD for ``gs == 1``)."""
    spec = _lookup(name)
    if name == "stride" and int(params.get("gs", spec.params["gs"])) == 1:
        return "NMD"
    return spec.md_class


def _lookup(name: str) -> WorkloadSpec:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise WorkloadError(
            f"unknown workload {name!r}; expected one of: {', '.join(sorted(WORKLOADS))}"
        ) from None


def workload_params(name: str, params: Mapping[str, Any]) -> dict[str, int | float]:
    """``params`` of workload ``name`` typed as its generator takes them (integers where
    the default is one); raises :class:`WorkloadError` for an unknown workload or
    parameter, text or a boolean, or a fraction for an integer parameter. Ranges are
    the generator's to check (:func:`generate`)."""
    spec = _lookup(name)
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        raise WorkloadError(
            f"workload {name!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"expected some of: {', '.join(f'{k}={v}' for k, v in spec.params.items())}"
        )
    typed: dict[str, int | float] = {}
    for key, value in params.items():
        default = spec.params[key]
        if isinstance(value, str | bool):
            raise WorkloadError(
                f"workload {name!r}: parameter {key} must be a number, got {value!r}"
            )
        if isinstance(default, int) and not isinstance(default, bool):
            if isinstance(value, float) and not value.is_integer():
                raise WorkloadError(f"workload {name!r}: parameter {key} must be an integer")
            typed[key] = int(value)
        else:
            typed[key] = float(value)
    return typed


def generate(name: str, seed: int = 0, **params: int | float | str | bool) -> AppTrace:
    """Generate workload ``name`` for ``seed`` with size ``params`` (others at defaults).

    Raises :class:`WorkloadError` (an :class:`~mdm.errors.MdmError` and ``ValueError``)
    for an unknown workload or parameter name, or an out-of-range value.
    """
    typed = workload_params(name, params)  # the name is known from here on
    spec = WORKLOADS[name]
    try:
        return spec.build(int(seed), **typed)
    except WorkloadError:
        raise
    except ValueError as exc:
        raise WorkloadError(f"workload {name!r}: {exc}") from None
    except MemoryError as exc:  # e.g. ctas=99999999999: numpy cannot allocate its arrays
        sizes = ", ".join(f"{k}={v}" for k, v in typed.items())
        raise WorkloadError(
            f"workload {name!r} with {sizes or 'its defaults'} is too large to generate "
            f"in this machine's memory ({exc})"
        ) from None


#: Prefix of a built-in workload spec, ``builtin:NAME?key=value&...``.
BUILTIN = "builtin:"


def parse_param_value(text: str) -> Any:
    """A workload parameter from text: true/false (any case), int, float, else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_builtin(spec: str) -> tuple[str, int, dict[str, Any]]:
    """``builtin:NAME?k=v&...`` -> (name, seed, params); values parsed as int, float,
    true/false or kept as strings; ``seed`` defaults to 0."""
    body = spec[len(BUILTIN) :]
    name, _, query = body.partition("?")
    if not name:
        raise ConfigError(None, f"{spec!r}: expected builtin:NAME?key=value&...")
    pairs = parse_qsl(query, keep_blank_values=True)
    keys = [k for k, _ in pairs]
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice is not None:
        raise ConfigError(None, f"{spec!r}: parameter {twice!r} given twice")
    params = {k: parse_param_value(v) for k, v in pairs}
    seed = params.pop("seed", 0)
    if not isinstance(seed, int):
        raise ConfigError(None, f"{spec!r}: seed must be an integer, got {seed!r}")
    return name, seed, params


@overload
def load_trace(spec: str, *, lazy: Literal[False] = ..., **kwargs: Any) -> AppTrace: ...
@overload
def load_trace(spec: str, *, lazy: Literal[True], **kwargs: Any) -> AnyApp: ...
def load_trace(spec: str, *, lazy: bool = False, **kwargs: Any) -> AnyApp:
    """The application named by ``spec``: a ``builtin:`` workload spec (generated with
    :func:`generate`), else anything :func:`mdm.traces.open_trace` accepts, with its
    reader options ``kwargs`` (e.g. ``allow_unknown``). ``lazy``: a trace on disk as a
    :class:`~mdm.traces.model.LazyApp` (one kernel at a time); a generated workload is in
    memory either way and is returned as it is."""
    if spec.startswith(BUILTIN):
        name, seed, params = parse_builtin(spec)
        return generate(name, seed, **params)
    from mdm.traces import open_trace

    return open_trace(Path(spec), lazy=lazy, **kwargs)


__all__ = [
    "BUILTIN",
    "WORKLOADS",
    "WorkloadError",
    "WorkloadSpec",
    "generate",
    "load_trace",
    "md_class_of",
    "parse_builtin",
    "parse_param_value",
    "workload_params",
]
