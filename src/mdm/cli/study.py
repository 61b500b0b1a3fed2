"""``mdm study``: the case studies of paper 001 Section VII."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import cache_timing_option, cli_errors
from mdm.errors import ConfigError

app = typer.Typer(
    rich_markup_mode="markdown", help="Case studies (paper 001 Figs. 11-15).", no_args_is_help=True
)

_WL = typer.Option(None, "--workload", help="NAME or NAME:key=v,key=v (repeatable)")
_TR = typer.Option(None, "--trace", help="trace folder (repeatable)")
_MODELS = typer.Option(None, "--model", help="model (repeatable)")
_TIMING = typer.Option(
    "base",
    "--cache-timing",
    help="base: simulate the caches at the preset's clocks and bandwidths, one simulation "
    "per cache configuration; point: at every point's own (slower; see mdm.explore.spec)",
)


def _workloads(names: list[str] | None, traces: list[Path] | None) -> dict:
    from pydantic import ValidationError

    from mdm.explore.spec import WorkloadSpec

    wls = []
    for n in names or []:
        name, _, rest = n.partition(":")
        params = {}
        for kv in filter(None, rest.split(",")):
            k, sep, v = kv.partition("=")
            if not sep:
                raise ConfigError(None, f"--workload {n!r}: expected NAME:key=value,...")
            params[k] = float(v) if "." in v else int(v) if v.lstrip("-").isdigit() else v
        try:
            wls.append(WorkloadSpec(name=name, params=params, label=n))
        except ValidationError as exc:
            why = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            raise ConfigError(None, f"--workload {n!r}: {why}") from None
    wls += [WorkloadSpec(trace=str(t.resolve()), label=lab) for t, lab in _labels(traces or [])]
    return {"workloads": wls} if wls else {}


def _labels(traces: list[Path]) -> list[tuple[Path, str | None]]:
    """Each trace with a label when its folder's name is not unique among them
    (``sm61/vecadd`` beside ``sm70/vecadd``: the shortest distinct path tails), else
    ``None`` (the folder's name, as a sweep spec labels a trace)."""

    def parts(t: Path) -> tuple[str, ...]:
        p = t.resolve()
        return (p.parent if p.name == "kernelslist.g" else p).parts

    names = [parts(t)[-1] for t in traces]
    out: list[tuple[Path, str | None]] = []
    for t, name in zip(traces, names, strict=True):
        if names.count(name) == 1:
            out.append((t, None))
            continue
        p = parts(t)
        others = [parts(o) for o in traces if parts(o) != p]
        n = 2
        while n < len(p) and any(o[-n:] == p[-n:] for o in others):
            n += 1
        out.append((t, "/".join(p[-n:])))
    return out


def _kw(
    models: list[str] | None, preset: str, workers: int | None, cache_timing: str = "base"
) -> dict:
    kw: dict = {"base": preset, "workers": workers, "progress": True}
    kw["cache_timing"] = cache_timing_option(cache_timing)
    if models:
        kw["models"] = models
    return kw


def _study_command(command: str, func: str, doc: str) -> None:
    """Register ``mdm study COMMAND``: ``mdm.explore.studies.FUNC`` writing ``FUNC.csv``."""

    def run(
        out: Path = typer.Option(Path(f"study-{command}"), "--out"),
        workload: list[str] = _WL,
        trace: list[Path] = _TR,
        model: list[str] = _MODELS,
        preset: str = "mdm_pascal",
        workers: int = typer.Option(None, min=1, help="process-pool size (default: all cores)"),
        cache_timing: str = _TIMING,
    ) -> None:
        with cli_errors():
            from mdm.explore import studies

            getattr(studies, func)(
                out, **_workloads(workload, trace), **_kw(model, preset, workers, cache_timing)
            )
            typer.echo(f"wrote {out / (func + '.csv')} and {out / 'report.html'}")

    run.__doc__ = doc
    app.command(command)(run)


_study_command("heatmap", "heatmap", "SM count x DRAM bandwidth heatmaps (Fig. 11/12).")
_study_command("dvfs", "dvfs", "Predicted execution-time change from 2.0 to 1.4 GHz (Fig. 13).")
_study_command(
    "cpi-bandwidth", "cpi_bandwidth", "CPI stacks as NoC and DRAM bandwidth vary (Fig. 14)."
)


@app.command("streaming-l1")
def streaming_l1(
    out: Path = typer.Option(Path("study-streaming-l1"), "--out"),
    workload: list[str] = _WL,
    trace: list[Path] = _TR,
    model: list[str] = _MODELS,
    preset: str = "mdm_pascal",
    mshr: int = typer.Option(4096, help="streaming MSHRs"),
    workers: int = typer.Option(None, min=1, help="process-pool size (default: all cores)"),
) -> None:
    """Classic vs streaming L1 (Fig. 15)."""
    with cli_errors():
        from mdm.explore import studies

        studies.streaming_l1(
            out, mshr_entries=mshr, **_workloads(workload, trace), **_kw(model, preset, workers)
        )
        typer.echo(f"wrote {out / 'streaming_l1.csv'} and {out / 'report.html'}")
