"""Sweep specification: YAML or TOML, validated with pydantic.

A spec names a base preset, optional named deltas (dicts of dotted configuration
fields applied on top of the base), a grid (cartesian product over fields), zipped
lists (advanced together, all of the same length), workloads and models::

    name: mshr_vs_bw
    base: mdm_pascal
    deltas: {classic: {}, streaming: {l1.allocate_on: fill, l1.mshr_entries: 1024}}
    grid: {n_sm: [14, 28, 56], dram.bandwidth_gbps: [240, 480, 960]}
    zip: {core_clock_mhz: [1400, 2000], l2.hit_latency_ns: [70, 70]}
    workloads:
      - {name: stride, params: {gs: 32}, label: stride32}
      - {trace: ../shared/reference/traces/sm61/spmv_csr}
    models: [mdm, gpumech]
    cache_timing: base         # or point

Points are ``deltas x grid x zip`` (a missing part contributes one empty entry).
Later parts override earlier ones on the same field. Relative trace paths are
resolved against the spec file's folder. A point's id is a hash of its complete
update dict, so a point has the same id in any spec; a sweep folder resumes only the
spec that started it (:func:`mdm.explore.runner.run_sweep`).

``cache_timing``: ``base`` (default) simulates each point's caches with the base
preset's :data:`mdm.memory.TIMING_FIELDS` (clocks, latencies, bandwidths;
:func:`mdm.memory.with_timing_of`), so points that differ only in timing share one
simulation per cache configuration and the models alone account for their timing, as
in paper 001's pipeline (Fig. 1: the cache simulation, step 3, gives miss rates; the
equations, step 4, carry the bandwidths and latencies); ``point`` simulates every point
at its own timing, so each clock or bandwidth point pays its own simulation. Why
``base`` is the default (2026-11-25): on the reference's 34 timing-sweep runs (DRAM and
NoC bandwidth x0.5 / x2, core clock 1.0 / 2.0 GHz) it is as accurate (over the 30 MD and
NMD ones, mean |IPC error| of ``mdm-pipelined`` 12.8 % with ``point``, 12.3 % with
``base``, no model's up by more than 0.1 point; docs/measurement-log.md; 2026-11-26,
after the cache simulation's scheduler change: 9.6 % and 9.8 %, no model up by more
than 0.5 point), and the 1,000-point
benchmark sweep takes a fifth of the time. A manifest without the field (folders written
before it existed, or with ``point``) is a ``point`` sweep: resume those with
``cache_timing = "point"``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mdm._yaml import yaml_load
from mdm.errors import ConfigError

Scalar = int | float | str | bool


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WorkloadSpec(_Strict):
    """A built-in workload (``name`` + ``params`` + ``seed``) or a trace folder (``trace``)."""

    name: str | None = None
    trace: str | None = None
    params: dict[str, Scalar] = Field(default_factory=dict)
    seed: int = 0
    label: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadSpec:
        if (self.name is None) == (self.trace is None):
            raise ValueError("give exactly one of 'name' (built-in workload) or 'trace' (path)")
        if self.trace is not None and self.params:
            raise ValueError("'params' only apply to built-in workloads, not to 'trace'")
        if self.name is not None:  # its name and parameters now, not when a worker runs it
            from mdm.traces.workloads import workload_params

            workload_params(self.name, self.params)  # WorkloadError is a ValueError
        return self

    @property
    def key(self) -> str:
        """Label used in the output table (``label``, else name/trace folder name)."""
        if self.label:
            return self.label
        if self.trace is not None:
            return Path(self.trace).name
        if not self.params:
            return str(self.name)
        args = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.name}({args})"


class SweepSpec(_Strict):
    """A validated sweep specification (see the module docstring)."""

    #: the default output folder is ``sweep-NAME``: letters, digits, ``.``, ``_``, ``-``
    name: str = Field(default="sweep", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)
    base: str = "mdm_pascal"
    deltas: dict[str, dict[str, Scalar]] = Field(default_factory=dict)
    grid: dict[str, list[Scalar]] = Field(default_factory=dict)
    zip: dict[str, list[Scalar]] = Field(default_factory=dict)
    workloads: list[WorkloadSpec] = Field(min_length=1)
    models: list[str] = Field(default_factory=lambda: ["mdm"], min_length=1)
    cache_timing: Literal["point", "base"] = "base"

    def cache_timing_note(self) -> str:
        """One sentence for reports: at which timing the points' caches were simulated."""
        if self.cache_timing == "base":
            return (
                "Caches simulated once per cache configuration, with the clocks, latencies "
                f"and bandwidths of the base ({self.base}); each point's own timing enters "
                "through the models (cache_timing = base)."
            )
        return (
            "Caches simulated at every point's own clocks, latencies and bandwidths "
            "(cache_timing = point)."
        )

    @model_validator(mode="after")
    def _shapes(self) -> SweepSpec:
        for f, vals in self.grid.items():
            if not vals:
                raise ValueError(f"grid field {f!r} has no values")
            twice = [v for i, v in enumerate(vals) if v in vals[:i]]  # 28 == 28.0 too
            if twice:
                raise ValueError(f"grid field {f!r} lists {twice[0]!r} twice")
        both = sorted(set(self.grid) & set(self.zip))
        if both:
            raise ValueError(
                f"field(s) {both} in both grid and zip: zip's values would replace grid's "
                "(give each field in one of them)"
            )
        lengths = {f: len(v) for f, v in self.zip.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"zip lists must have equal lengths, got {lengths}")
        if any(n == 0 for n in lengths.values()):
            raise ValueError("zip lists must not be empty")
        keys = [w.key for w in self.workloads]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"workload labels must be unique, duplicated: {dup} (add 'label')")
        return self

    @property
    def swept_fields(self) -> list[str]:
        """Every configuration field a point may change, in first-mention order."""
        out: dict[str, None] = {}
        for d in self.deltas.values():
            out.update(dict.fromkeys(d))
        out.update(dict.fromkeys(self.grid))
        out.update(dict.fromkeys(self.zip))
        return list(out)


@dataclass(frozen=True)
class Point:
    """One configuration point: ``updates`` applied to the base preset."""

    index: int
    point_id: str
    delta: str
    updates: dict[str, Scalar] = field(hash=False)


def point_id(updates: dict[str, Any]) -> str:
    """Stable 12-hex id of an update dict (order-independent)."""
    blob = json.dumps(sorted(updates.items()), default=str).encode()
    return hashlib.sha1(blob).hexdigest()[:12]


def expand_points(spec: SweepSpec) -> list[Point]:
    """All points, ``deltas x grid x zip``, in a deterministic order; duplicates removed."""
    deltas = list(spec.deltas.items()) or [("base", {})]
    gfields = list(spec.grid)
    grid = [
        dict(zip(gfields, combo, strict=True)) for combo in itertools.product(*spec.grid.values())
    ]
    zfields = list(spec.zip)
    n_zip = len(next(iter(spec.zip.values()))) if spec.zip else 1
    zipped = [{f: spec.zip[f][i] for f in zfields} for i in range(n_zip)]
    points: list[Point] = []
    seen: set[str] = set()
    for (dname, dvals), g, z in itertools.product(deltas, grid, zipped):
        updates = {**dvals, **g, **z}
        pid = point_id({"__delta__": dname, **updates})
        if pid in seen:
            continue
        seen.add(pid)
        points.append(Point(len(points), pid, dname, updates))
    return points


def _fmt_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def parse_spec(data: Any, source: str = "<spec>") -> SweepSpec:
    """Validate a decoded spec; errors become :class:`ConfigError` naming source and field."""
    try:
        return SweepSpec.model_validate(data)
    except ValidationError as exc:
        msgs = "; ".join(f"field {_fmt_loc(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(source, f"invalid sweep spec: {msgs}") from None


def load_spec(path: str | Path) -> SweepSpec:
    """Read a ``.yaml``/``.yml`` or ``.toml`` sweep spec; trace paths made absolute."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "sweep spec not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, f"expected UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml_load(text)
        else:
            raise ConfigError(path, "sweep spec must end in .yaml, .yml or .toml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(path, f"cannot parse spec: {exc}") from None
    spec = parse_spec(data, str(path))
    wls = [
        w.model_copy(update={"trace": str((path.parent / w.trace).resolve())})
        if w.trace is not None and not Path(w.trace).is_absolute()
        else w
        for w in spec.workloads
    ]
    return spec.model_copy(update={"workloads": wls})
