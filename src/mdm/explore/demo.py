"""``mdm demo``: every built-in workload, every model, the baseline preset, one report.

Workloads are generated at their default sizes, or with ``tiny=True`` with their
thread-block count parameters (``ctas``/``blocks``) capped at :data:`TINY_CTAS`
(documented choice: enough for one wave on 28 SMs while keeping the demo and its test
fast). Writes ``predictions.csv`` (every model, application and kernel rows),
``figures/`` (IPC per workload and model; MDM CPI stacks) and ``report.html``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mdm.explore.runner import atomic_write_table
from mdm.report import figures
from mdm.report.html import Section, write_page
from mdm.report.pages import cpi_columns

TINY_CTAS = 56
_CTA_PARAMS = ("ctas", "blocks", "n_ctas")


def demo_params(defaults: dict[str, Any], tiny: bool) -> dict[str, Any]:
    """Generator parameters of one workload for the demo (see module docstring)."""
    params = dict(defaults)
    if tiny:
        for k in _CTA_PARAMS:
            if k in params and isinstance(params[k], int):
                params[k] = min(params[k], TINY_CTAS)
    return params


def _predict_default(
    name: str, params: dict[str, Any], preset: str, models: Sequence[str]
) -> list[dict]:
    from mdm.config import load_gpu
    from mdm.pipeline import predict_app, prepare
    from mdm.traces.workloads import generate

    app = generate(name, 0, **params)
    return predict_app(prepare(app), load_gpu(preset), list(models)).to_rows()


def _predict_all(
    workloads: dict[str, Any], tiny: bool, preset: str, models: Sequence[str]
) -> dict[str, list[dict]]:
    """:func:`_predict_default`'s rows per workload: all generated, prepared and
    coalesced first, while another process compiles the cache simulator's issue loop
    (:func:`~mdm.memory.cachesim.compile_in_background`; not when numba's cache already
    holds it: then none is coalesced ahead), then each simulated and predicted."""
    from mdm.config import load_gpu
    from mdm.memory.cachesim import compile_in_background, prepare_inputs
    from mdm.pipeline import predict_app, prepare
    from mdm.traces.workloads import generate

    gpu = load_gpu(preset)
    compiling = compile_in_background(gpu)
    prepared = {
        name: prepare(generate(name, 0, **demo_params(dict(w.params), tiny)))
        for name, w in workloads.items()
    }
    if compiling:  # the coalescer compiles here meanwhile (held inputs: +65 MB)
        for p in prepared.values():
            prepare_inputs(p.app, gpu)
    return {
        name: predict_app(prepared.pop(name), gpu, list(models)).to_rows() for name in workloads
    }


def run_demo(
    out: str | Path,
    preset: str = "mdm_pascal",
    tiny: bool = False,
    workloads: dict[str, Any] | None = None,
    models: Sequence[str] | None = None,
    predict: Callable[[str, dict[str, Any], str, Sequence[str]], list[dict]] = _predict_default,
) -> pd.DataFrame:
    """Predict every built-in workload with every model; write the report into ``out``.

    ``workloads`` maps name -> spec with ``.params`` and ``.md_class`` (default
    :data:`mdm.traces.workloads.WORKLOADS`); ``models`` defaults to every registered model.
    """
    out = Path(out)
    if workloads is None:
        from mdm.traces.workloads import WORKLOADS

        workloads = dict(WORKLOADS)
    if models is None:
        from mdm.models.base import model_names

        models = model_names()
    if predict is _predict_default:
        predicted = _predict_all(workloads, tiny, preset, models)
    else:
        predicted = {
            name: predict(name, demo_params(dict(w.params), tiny), preset, models)
            for name, w in workloads.items()
        }
    rows = [
        {"workload": name, "class": getattr(w, "md_class", ""), **r}
        for name, w in workloads.items()
        for r in predicted[name]
    ]
    table = pd.DataFrame(rows)
    atomic_write_table(table, out / "predictions.csv")
    app = table[table["kernel"].astype(str) == "total"].copy()
    app["label"] = app["workload"] + " (" + app["class"].astype(str) + ")"
    paths = figures.grouped_bars(
        app,
        "label",
        "model",
        "ipc",
        out / "figures" / "ipc",
        title=f"Predicted IPC on {preset}",
        ylabel="IPC (warp insts / cycle)",
    )
    comps = cpi_columns(app)
    first = "mdm" if "mdm" in set(app["model"]) else str(app["model"].iloc[0])
    if comps:
        paths += figures.cpi_stacks(
            app[app["model"] == first],
            "label",
            comps,
            out / "figures" / "cpi_stacks",
            title=f"{first}: CPI stacks",
        )
    cols = [c for c in ["workload", "class", "model", "cycles", "ipc", "md_fraction"] if c in app]
    write_page(
        out / "report.html",
        f"mdm demo on {preset}",
        [
            Section(
                "Predictions",
                text=f"{len(workloads)} workloads x {len(models)} models",
                figures=paths,
                tables=[app[cols]],
            )
        ],
    )
    return table
