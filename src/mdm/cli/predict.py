"""``mdm predict``: cycles, IPC, CPI stack and MD-interval share of an application.

``TRACE`` is anything :func:`mdm.traces.open_trace` accepts (a trace directory or a
``kernelslist.g``), or a built-in synthetic workload ``builtin:NAME?key=value&...``,
e.g. ``builtin:stride?gs=32&seed=3`` (``seed`` defaults to 0, values are parsed as
int, float, true/false or kept as strings) passed to
:func:`mdm.traces.workloads.generate`.

``--gpu`` is a preset name or file accepted by :func:`mdm.config.load_gpu`, or an
Accel-Sim ``gpgpusim.config`` (imported with :func:`mdm.config.accelsim.import_accelsim`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl

import typer

from mdm.cli.common import cli_errors, echo_json
from mdm.errors import ConfigError

BUILTIN = "builtin:"


def _value(text: str) -> Any:
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
    """``builtin:NAME?k=v&...`` -> (name, seed, params)."""
    body = spec[len(BUILTIN) :]
    name, _, query = body.partition("?")
    if not name:
        raise ConfigError(None, f"{spec!r}: expected builtin:NAME?key=value&...")
    params = {k: _value(v) for k, v in parse_qsl(query, keep_blank_values=True)}
    seed = params.pop("seed", 0)
    if not isinstance(seed, int):
        raise ConfigError(None, f"{spec!r}: seed must be an integer, got {seed!r}")
    return name, seed, params


def load_trace(spec: str) -> Any:
    """The :class:`~mdm.traces.model.AppTrace` named by ``spec`` (module docstring)."""
    if spec.startswith(BUILTIN):
        from mdm.traces.workloads import generate

        name, seed, params = parse_builtin(spec)
        return generate(name, seed, **params)
    from mdm.traces import open_trace

    return open_trace(Path(spec))


def load_gpu_spec(spec: str) -> Any:
    """A :class:`~mdm.config.gpu.GPUConfig` from a preset, a config file or a gpgpusim.config."""
    p = Path(spec)
    if p.is_file() and (p.name.endswith("gpgpusim.config") or p.suffix == ".config"):
        from mdm.config.accelsim import import_accelsim

        return import_accelsim(p, "")
    from mdm.config import load_gpu

    return load_gpu(spec)


def _short(name: str) -> str:
    """Kernel name without its parameter list, at most 32 characters."""
    base = name.split("(")[0]
    return base if len(base) <= 32 else base[:31] + "…"


def _table(pred: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{pred.app or 'application'} on {pred.gpu}")
    for col in ("model", "kernel", "cycles", "IPC", "MD share", "CPI stack"):
        t.add_column(col, justify="left" if col in ("model", "kernel", "CPI stack") else "right")
    for r in pred.to_rows():
        stack = " ".join(
            f"{k[4:]}={v:.3g}" for k, v in r.items() if k.startswith("cpi_") and v != 0
        )
        t.add_row(
            r["model"],
            _short(r["kernel"]),
            f"{r['cycles']:.0f}",
            f"{r['ipc']:.4g}",
            f"{r['md_fraction']:.2f}",
            stack,
            end_section=r["kernel"] == "total",
        )
    Console().print(t)


def predict(
    trace: Annotated[str, typer.Argument(help="trace dir / kernelslist.g, or builtin:NAME?k=v")],
    gpu: Annotated[str, typer.Option("--gpu", help="preset name, config file or gpgpusim.config")],
    model: Annotated[
        list[str] | None, typer.Option("--model", help="model name (repeat); default: all")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
) -> None:
    """Predict cycles, IPC, CPI stack and MD-interval share (eq. 2) per kernel and in total."""
    with cli_errors():
        from mdm.models import _load_builtin  # noqa: F401  (registers the built-in models)
        from mdm.models.base import MODELS
        from mdm.pipeline import predict_app

        names = list(model) if model else sorted(MODELS)
        unknown = [m for m in names if m not in MODELS]
        if unknown:
            raise ConfigError(
                None, f"unknown model(s) {unknown}; known: {', '.join(sorted(MODELS))}"
            )
        cfg = load_gpu_spec(gpu)
        app = load_trace(trace)
        pred = predict_app(app, cfg, names)
        if as_json:
            echo_json(pred.to_dict())
        else:
            _table(pred)
