"""The MDM pipeline end to end (paper 001 Fig. 1): trace -> profile -> cache -> models.

Two steps, so that sweeps pay the architecture-independent work once:

* :func:`prepare` (once per trace): per kernel the representative warp
  (:mod:`mdm.profile.representative`, default latencies), the instruction mix and the
  instruction totals. Nothing here depends on the GPU configuration.
* :func:`predict_app` (once per configuration): the cache simulation (unless given),
  then per kernel the interval profile of the representative warp with the
  configuration's latencies and the per-PC miss statistics, the occupancy, one
  :class:`~mdm.models.base.KernelInput`, and each requested model.

Choices:

* The interval profile's memory columns come from per-PC averages over all warps
  (see :mod:`mdm.profile.interval`), so the cache simulation needs no per-warp tracking.
* *Coalesced vs uncoalesced* (MWP-CWP's split, :class:`InstructionMix`): a global
  memory instruction is uncoalesced when its active lanes touch more than one
  128-byte line (the warp coalescer of Pascal and earlier); this is architecture
  independent. ``requests_per_uncoalesced`` is the mean number of lines of the
  uncoalesced ones. Instructions without addresses count as coalesced.
* Global loads are ``LD_GLOBAL`` and local/atomic accesses with a destination
  register; global stores are ``ST_GLOBAL`` and local/atomic accesses without one.
* Occupancy: W and blocks per SM are those actually resident in the first wave
  (fewer than the resource limit when the kernel has fewer blocks than slots).
* Kernels with no instructions are left out of the prediction (zero cycles).
* Application totals (paper 001 Section III-C): cycles add up over kernels, IPC is
  total warp instructions / total cycles, the CPI stack and ``md_fraction`` are
  instruction-weighted (:func:`mdm.models.base.combine_predictions`).
* ``md_fraction`` (eq. 2's share of MD intervals) exists only for the interval models
  (MDM and GPUMech families): NaN in rows, null in JSON for MWP-CWP and the roofline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mdm._jit import njit
from mdm._json import dumps as json_dumps
from mdm.config.gpu import GPUConfig
from mdm.errors import EmptyInputError
from mdm.memory.stats import CacheSimResult, KernelCacheStats
from mdm.models.base import (
    InstructionMix,
    KernelInput,
    KernelPrediction,
    combine_predictions,
    get_model,
    with_launch,
)
from mdm.profile.interval import (
    DEFAULT_MERGE_THRESHOLD,
    exec_unit_costs,
    gpu_latencies,
    interval_profile,
    shared_bank_passes,
    warp_cycles,
    warp_summaries,
)
from mdm.profile.representative import longest_from_summaries, select_from_summaries
from mdm.traces.model import AnyApp, AppTrace, InstrClass, KernelTrace, Memcpy, popcount32

#: Line size of the architecture-independent coalescing test (bytes).
COALESCE_LINE_BYTES = 128


@dataclass(frozen=True)
class PreparedKernel:
    """Architecture-independent data of one kernel."""

    index: int  # position in ``app.kernels``
    kernel: KernelTrace
    rep_warp: int
    mix: InstructionMix
    total_warp_insts: int
    total_thread_insts: int
    #: the warp that takes longest alone at default latencies
    #: (:func:`mdm.profile.representative.longest_from_summaries`)
    long_warp: int = 0
    #: the host-to-device copies listed between the previous kernel and this one, which
    #: the cache simulation applies first (``l2.fill_on_memcpy``)
    copies: tuple[Memcpy, ...] = ()


@dataclass
class PreparedApp:
    """An application prepared once for many predictions (reusable, read-only)."""

    app: AppTrace
    kernels: list[PreparedKernel]

    @property
    def name(self) -> str:
        return self.app.name


@njit(cache=True)
def _lines_per_inst(idx, addr_ptr, addrs, shift, buf):  # noqa: ANN001, ANN202
    """Distinct ``addr >> shift`` values of each instruction in ``idx`` (0 without
    addresses). ``buf``: room for one instruction's lanes. An insertion sort per
    instruction (its lanes are nearly always in ascending order already) instead of
    ``np.sort``: no allocation per instruction, and numba's quicksort (about 1.5 s of a
    cold start's compilation) is not compiled."""
    out = np.zeros(idx.shape[0], np.int64)
    for j in range(idx.shape[0]):
        i = idx[j]
        a, n = addr_ptr[i], addr_ptr[i + 1] - addr_ptr[i]
        if n <= 0:
            continue
        for t in range(n):
            v = addrs[a + t] >> shift
            s = t
            while s > 0 and buf[s - 1] > v:
                buf[s] = buf[s - 1]
                s -= 1
            buf[s] = v
        c = 1
        for t in range(1, n):
            if buf[t] != buf[t - 1]:
                c += 1
        out[j] = c
    return out


def instruction_mix(kernel: KernelTrace) -> InstructionMix:
    """Per-warp average instruction counts by role (module docstring for the choices)."""
    w = max(kernel.n_warps, 1)
    ic = kernel.iclass
    has_dst = (kernel.dst >= 0).any(axis=1)
    la = np.isin(ic, [InstrClass.LOCAL, InstrClass.ATOMIC])
    loads = (ic == InstrClass.LD_GLOBAL) | (la & has_dst)
    stores = (ic == InstrClass.ST_GLOBAL) | (la & ~has_dst)
    shared = np.isin(ic, [InstrClass.LD_SHARED, InstrClass.ST_SHARED])
    barriers = ic == InstrClass.BARRIER
    mem_idx = np.flatnonzero(loads | stores).astype(np.int64)
    shift = int(np.log2(COALESCE_LINE_BYTES))
    addr_ptr = kernel.addr_ptr.astype(np.int64, copy=False)
    # room for the most lanes of one memory instruction (the others are not read)
    width = int((addr_ptr[mem_idx + 1] - addr_ptr[mem_idx]).max()) if mem_idx.size else 0
    lines = _lines_per_inst(
        mem_idx,
        addr_ptr,
        kernel.addrs.astype(np.uint64, copy=False),
        np.uint64(shift),
        np.empty(max(width, 1), np.uint64),
    )
    unc = lines > 1
    n_unc = int(unc.sum())
    n_mem = int(mem_idx.size)
    n = kernel.n_instructions
    return InstructionMix(
        total=n / w,
        compute=(n - n_mem - int(shared.sum())) / w,
        global_loads=int(loads.sum()) / w,
        global_stores=int(stores.sum()) / w,
        shared=int(shared.sum()) / w,
        barriers=int(barriers.sum()) / w,
        coalesced_mem=(n_mem - n_unc) / w,
        uncoalesced_mem=n_unc / w,
        requests_per_uncoalesced=float(lines[unc].mean()) if n_unc else 1.0,
    )


def prepare_kernel(
    kernel: KernelTrace, index: int = 0, copies: tuple[Memcpy, ...] = ()
) -> PreparedKernel:
    """Representative warp, mix and totals of one kernel (``copies``: the host-to-device
    copies listed just before it)."""
    rep = long = 0
    if kernel.n_warps:
        n, s = warp_summaries(kernel)
        rep, long = select_from_summaries(n, s), longest_from_summaries(n, s)
    return PreparedKernel(
        index=index,
        kernel=kernel,
        rep_warp=rep,
        long_warp=long,
        mix=instruction_mix(kernel),
        total_warp_insts=kernel.n_instructions,
        total_thread_insts=int(popcount32(kernel.mask).sum(dtype=np.int64)),
        copies=copies,
    )


def prepare(app: AppTrace) -> PreparedApp:
    """Architecture-independent preparation of every kernel of ``app`` (once per trace)."""
    return PreparedApp(app=app, kernels=list(_prepared_stream(app)))


def _md(v: float | None, missing: float | None) -> float | None:
    return missing if v is None else float(v)


@dataclass
class AppPrediction:
    """Per model, the predictions of every kernel, and application totals."""

    app: str
    gpu: str
    kernels: dict[str, list[KernelPrediction]]  # model -> one prediction per kernel
    inputs: list[KernelInput] = field(default_factory=list, repr=False)

    @property
    def models(self) -> list[str]:
        return list(self.kernels)

    def total(self, model: str) -> KernelPrediction:
        """Application-level prediction of ``model`` (paper 001 Section III-C)."""
        return combine_predictions(self.kernels[model], kernel="total")

    def cycles(self, model: str) -> float:
        return self.total(model).cycles

    def ipc(self, model: str) -> float:
        return self.total(model).ipc

    def to_rows(self) -> list[dict[str, Any]]:
        """Tidy rows: one per (model, kernel) plus ``kernel='total'`` per model."""
        rows: list[dict[str, Any]] = []
        for model, preds in self.kernels.items():
            for p in [*preds, self.total(model)]:
                row: dict[str, Any] = {
                    "model": model,
                    "kernel": p.kernel,
                    "cycles": float(p.cycles),
                    "ipc": float(p.ipc),
                    "warp_insts": int(p.warp_insts),
                    "md_fraction": _md(p.md_fraction, float("nan")),
                }
                row.update({f"cpi_{k}": float(v) for k, v in p.cpi_stack.items()})
                rows.append(row)
        return rows

    def to_dict(self) -> dict[str, Any]:
        """Per model: ``cycles``, ``ipc``, ``cpi_stack``, ``md_fraction`` and ``kernels``."""
        out: dict[str, Any] = {"app": self.app, "gpu": self.gpu, "models": {}}
        # per kernel, the same for every model (:data:`_DIAGNOSTICS`)
        diagnostics = [{k: f(i) for k, f in _DIAGNOSTICS.items()} for i in self.inputs]
        for model, preds in self.kernels.items():
            t = self.total(model)
            diag = (
                diagnostics
                if len(diagnostics) == len(preds)
                else [dict.fromkeys(_DIAGNOSTICS)] * len(preds)
            )
            out["models"][model] = {
                "cycles": float(t.cycles),
                "ipc": float(t.ipc),
                "warp_insts": int(t.warp_insts),
                "md_fraction": _md(t.md_fraction, None),
                "cpi_stack": {k: float(v) for k, v in t.cpi_stack.items()},
                "kernels": [
                    {
                        "kernel": p.kernel,
                        "cycles": float(p.cycles),
                        "ipc": float(p.ipc),
                        "warp_insts": int(p.warp_insts),
                        "md_fraction": _md(p.md_fraction, None),
                        "cpi_stack": {k: float(v) for k, v in p.cpi_stack.items()},
                        **d,
                        "details": {k: float(v) for k, v in p.details.items()},
                    }
                    for p, d in zip(preds, diag, strict=True)
                ],
            }
        return out

    def conflict_text(self) -> list[str]:
        """Per predicted kernel: its shared-memory bank conflicts, e.g. ``"PC 0x1e0:
        32 passes"`` (empty when none)."""
        return [
            ", ".join(f"PC {pc}: {p:.3g} passes" for pc, p in _conflicts(i).items())
            for i in self.inputs
        ]

    def blocking_text(self) -> list[str]:
        """Per predicted kernel: why its L1s waited in the cache simulation, largest
        cause first, e.g. ``"merge slots 26,726 (41 %)"`` (cycles per active SM, and
        their share of the simulation's time line, :func:`cache_timeline`; "none").
        The share is what to read: the simulation's clock drifts on memory-divergent
        kernels (docs/status.md, "Known gaps"), and the waits with it."""
        out = []
        for i in self.inputs:
            causes = sorted(l1_blocking(i).items(), key=lambda kv: -kv[1])
            span = cache_timeline(i)
            parts = [
                f"{c.replace('_', ' ')} {v:,.0f}"
                + (f" ({100 * v / span:.0f} %)" if span > 0 else "")
                for c, v in causes
                if v >= 0.5
            ]
            out.append(", ".join(parts) or "none")
        return out

    def kernel_cache_rates(self) -> list[dict[str, float | int]]:
        """Per predicted kernel: :func:`cache_rates` (miss rates, DRAM bytes)."""
        return [cache_rates(i) for i in self.inputs]

    def occupancy_text(self) -> list[str]:
        """Per predicted kernel: ``"W warps/SM (B blocks), limited by X, N waves"``."""
        return [
            f"{i.warps_per_sm} warp{_s(i.warps_per_sm)}/SM ({i.blocks_per_sm} "
            f"block{_s(i.blocks_per_sm)}), limited by {i.occupancy_limit or '?'}, "
            f"{i.waves:.3g} wave{_s(i.waves)}"
            for i in self.inputs
        ]

    def to_json(self) -> str:
        """:meth:`to_dict` as standard JSON (non-finite numbers as ``null``)."""
        return json_dumps(self.to_dict(), indent=2)


def _conflicts(inp: KernelInput) -> dict[str, float]:
    """The representative warp's shared-memory PCs with bank conflicts (more than one
    pass per execution): ``{"0x1e0": 32.0}``."""
    return {f"{pc:#x}": p for pc, p in sorted(inp.shared_bank_passes.items()) if p > 1}


def l1_blocking(inp: KernelInput) -> dict[str, float]:
    """Cycles a kernel's blocking L1 waited in the cache simulation, per active SM, by
    cause (Accel-Sim's reservation fails): ``miss_queue`` full, no free ``mshr_entry``,
    the read's MSHR entry out of ``merge_slots``, every way of the set reserved
    (``line_allocation``)."""
    c = inp.cache
    sms = max(inp.active_sms, 1)
    return {
        "miss_queue": c.l1_miss_queue_wait_cycles / sms,
        "mshr_entry": c.l1_mshr_wait_cycles / sms,
        "merge_slots": c.l1_merge_wait_cycles / sms,
        "line_allocation": c.l1_alloc_wait_cycles / sms,
    }


def cache_timeline(inp: KernelInput) -> int:
    """The kernel's length on the cache simulation's clock (cycles): the time against
    which :func:`l1_blocking`'s waits are counted, not a prediction."""
    return int(inp.cache.timeline_cycles)


def l2_blocking(inp: KernelInput) -> dict[str, float]:
    """Cycles a kernel's L2 banks were blocked in the cache simulation, per bank, by
    cause (Accel-Sim's L2 reservation fails): a read whose MSHR entry was out of
    ``merge_slots``, a miss that found no free ``mshr_entry``."""
    c = inp.cache
    banks = inp.gpu.l2.banks  # validated >= 1
    return {
        "merge_slots": c.l2_blocked_cycles / banks,
        "mshr_entry": c.l2_mshr_blocked_cycles / banks,
    }


def cache_rates(inp: KernelInput) -> dict[str, float | int]:
    """The model inputs' cache behaviour of a kernel, from its cache simulation: the L1
    global-read and L2 miss rates (as Accel-Sim counts them: pending hits are hits; all
    L2 accesses) and the DRAM bytes read and written."""
    c = inp.cache
    return {
        "l1_miss_rate": c.l1_miss_rate,
        "l2_miss_rate": c.l2_miss_rate,
        "dram_read_bytes": int(c.dram_read_bytes),
        "dram_write_bytes": int(c.dram_write_bytes),
    }


def _s(n: float) -> str:
    """Plural ending for ``n``."""
    return "" if n == 1 else "s"


def _occupancy_dict(inp: KernelInput) -> dict[str, Any]:
    """A kernel's occupancy for :meth:`AppPrediction.to_dict`."""
    return {
        "warps_per_sm": inp.warps_per_sm,
        "blocks_per_sm": inp.blocks_per_sm,
        "active_sms": inp.active_sms,
        "limited_by": inp.occupancy_limit,
        "waves": float(inp.waves),
    }


#: the per-kernel diagnostics of :meth:`AppPrediction.to_dict`, computed from the
#: kernel's input (None for every model when the prediction holds no inputs)
_DIAGNOSTICS: dict[str, Callable[[KernelInput], Any]] = {
    "kernel_id": lambda inp: inp.cache.kernel_id,  # the trace's (``mdm cachesim``'s) ID
    "occupancy": _occupancy_dict,
    "shared_bank_conflicts": _conflicts,
    "l1_blocking": l1_blocking,
    "l2_blocking": l2_blocking,
    "cache_timeline_cycles": cache_timeline,
    "cache": cache_rates,
}


def _occupancy(
    gpu: GPUConfig, k: KernelTrace, nregs_policy: str = "clamp"
) -> tuple[int, int, int, str]:
    """(W, blocks_per_sm, active_sms, limit) of ``k`` on ``gpu`` (model-notes section 5).

    ``blocks_per_sm`` is the *actual* number of concurrent blocks of the first wave:
    the resource limit of :func:`mdm.profile.occupancy.occupancy`, or fewer when the
    kernel has fewer blocks than block slots (``ceil(n_blocks / active_sms)``; a
    1-block kernel runs 1 block, not 32). ``W = blocks_per_sm * warps_per_block``.
    ``limit``: the limiting resource, or ``"grid"`` in the second case.
    """
    from mdm.profile.occupancy import kernel_occupancy

    occ = kernel_occupancy(gpu, k, nregs_policy)  # type: ignore[arg-type]
    sms = int(occ.active_sms)
    bps = min(int(occ.blocks_per_sm), -(-k.n_blocks // sms))
    limit = "grid" if bps < occ.blocks_per_sm else occ.limiting
    return bps * int(occ.warps_per_block), bps, sms, limit


def kernel_input(
    pk: PreparedKernel,
    gpu: GPUConfig,
    stats: KernelCacheStats,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    nregs_policy: str = "clamp",
    profiles: dict[tuple, Any] | None = None,
) -> KernelInput:
    """The :class:`KernelInput` of one prepared kernel on ``gpu`` with its cache statistics.

    ``profiles``: a memo of this kernel's interval profiles *for these statistics*
    (:func:`predict_app_configs` keeps one per kernel): configurations with equal
    latencies and issue parameters (e.g. a bandwidth sweep's points) share one profile,
    whose arrays are then made read-only; the representative warp's bank passes are
    kept there too, per shared-memory bank configuration.
    """
    k = pk.kernel
    lat = gpu_latencies(gpu, stats.per_pc)
    units = exec_unit_costs(gpu)
    sm = gpu.sm
    shared = (sm.shared_mem_banks, sm.shared_mem_warp_parts, sm.shared_mem_limited_broadcast)
    key = (
        shared,
        units[0].tobytes(),
        units[1].tobytes(),
        lat.class_cycles.tobytes(),
        lat.pc.tobytes(),
        lat.pc_cycles.tobytes(),
        gpu.l1.banks,
        gpu.l1.request_bytes,
        gpu.sm.issue_width,
        gpu.sm.dual_issue_diff_units,
        merge_threshold,
    )
    prof = None if profiles is None else profiles.get(key)
    if prof is None:
        prof = interval_profile(
            k,
            pk.rep_warp,
            lat,
            stats=stats.per_pc,
            merge_threshold=merge_threshold,
            l1_banks=gpu.l1.banks,
            issue_width=gpu.sm.issue_width,
            dual_issue_diff_units=gpu.sm.dual_issue_diff_units,
            unit_costs=units,
            shared_banks=shared,
            l1_entry_bytes=gpu.l1.request_bytes,
        )
        if profiles is not None:
            for col in vars(prof).values():
                if isinstance(col, np.ndarray):
                    col.flags.writeable = False  # shared by the memo's users
            profiles[key] = prof
    long_key = ("longest_warp", *key)
    long_cycles = None if profiles is None else profiles.get(long_key)
    if long_cycles is None:
        long_cycles = warp_cycles(k, pk.long_warp, lat, gpu.sm.issue_width) if k.n_warps else 0.0
        if profiles is not None:
            profiles[long_key] = long_cycles
    w, bps, sms, limit = _occupancy(gpu, k, nregs_policy)
    passes_key = ("shared_bank_passes", shared)
    passes = None if profiles is None else profiles.get(passes_key)
    if passes is None:
        passes = shared_bank_passes(k, pk.rep_warp, shared) if k.n_warps else {}
        if profiles is not None:
            profiles[passes_key] = passes
    return KernelInput(
        name=k.name,
        gpu=gpu,
        profile=prof,
        warps_per_sm=w,
        blocks_per_sm=bps,
        active_sms=sms,
        n_blocks=k.n_blocks,
        warps_per_block=k.warps_per_block,
        total_warp_insts=pk.total_warp_insts,
        total_thread_insts=pk.total_thread_insts,
        mix=pk.mix,
        cache=stats,
        occupancy_limit=limit,
        shared_bank_passes=passes,
        longest_warp_cycles=long_cycles,
    )


def _prepared_stream(app: AnyApp) -> Iterator[PreparedKernel]:
    """:func:`prepare_kernel` of each kernel as a pass over ``app`` reaches it, with the
    host-to-device copies listed since the previous kernel."""
    i = 0
    copies: list[Memcpy] = []
    for cmd in app.iter_commands():
        if isinstance(cmd, Memcpy):
            copies.append(cmd)
            continue
        yield prepare_kernel(cmd, i, tuple(copies))
        i += 1
        copies = []
        del cmd  # a kernel is not kept alive while the next one is read


def predict_app(
    app: AnyApp | PreparedApp,
    gpu: GPUConfig,
    models: Sequence[str],
    cache: CacheSimResult | None = None,
    *,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    nregs_policy: str = "clamp",
    on_kernel: Callable[[str], None] | None = None,
) -> AppPrediction:
    """Predict every kernel of ``app`` on ``gpu`` with each model in ``models``.

    ``cache`` is the application's cache simulation on ``gpu`` (or an equivalent
    configuration, same :func:`mdm.memory.cache_key`); it is run when not given.
    ``nregs_policy`` is passed to :func:`mdm.profile.occupancy.occupancy`: the default
    ``"clamp"`` treats impossible register counts of real traces (the corpus trace
    declares 21955 per thread) as the architectural maximum of 255.

    Kernels are taken one at a time (prepared, cache-simulated with the L2 carried over,
    profiled, predicted) and only their small model inputs are kept, so a
    :class:`~mdm.traces.model.LazyApp` is predicted with one kernel in memory.
    ``on_kernel(name)`` is called after each kernel (progress reports).
    """
    return predict_app_configs(
        app,
        [gpu],
        models,
        cache,
        merge_threshold=merge_threshold,
        nregs_policy=nregs_policy,
        on_kernel=on_kernel,
    )[0]


def _check_args(app: object, gpus: Sequence[object], models: Sequence[str]) -> None:
    """TypeError / ValueError naming the argument a caller got wrong (a model name for
    the list of them, a preset's name for its configuration, a path for a trace)."""
    from mdm.traces.model import AppTrace, LazyApp

    if isinstance(models, str):
        raise TypeError(f"models: expected a list of model names, got the string {models!r}")
    if not models:
        raise ValueError("predict_app needs at least one model")
    if not gpus:
        raise ValueError("predict_app_configs needs at least one configuration")
    for g in gpus:
        if not isinstance(g, GPUConfig):
            raise TypeError(
                f"gpu: expected a GPUConfig (mdm.config.load_gpu({g!r}) for a preset or "
                f"file), got {type(g).__name__}"
            )
    if not isinstance(app, AppTrace | LazyApp | PreparedApp):
        raise TypeError(
            f"app: expected a trace (mdm.traces.open_trace({app!r}) for a path, "
            f"mdm.traces.workloads.generate(...) for a built-in workload), got "
            f"{type(app).__name__}"
        )


def predict_app_configs(
    app: AnyApp | PreparedApp,
    gpus: Sequence[GPUConfig],
    models: Sequence[str],
    cache: CacheSimResult | None = None,
    *,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    nregs_policy: str = "clamp",
    on_kernel: Callable[[str], None] | None = None,
    sim_gpu: GPUConfig | None = None,
) -> list[AppPrediction]:
    """:func:`predict_app` on several configurations that share one cache simulation
    (equal :func:`mdm.memory.cache_key`), in one pass over ``app``: each kernel is
    prepared and simulated once (on ``gpus[0]``, unless ``cache`` is given) and
    predicted on every configuration, so a sweep over a
    :class:`~mdm.traces.model.LazyApp` holds one kernel at a time. One
    :class:`AppPrediction` per configuration, in order.

    ``sim_gpu``: simulate on this configuration instead, whose key must equal every
    configuration's without the timing fields (``cache_key(g, timing=False)``): a sweep
    whose caches are simulated with its base's timing (:func:`mdm.memory.with_timing_of`).
    """
    _check_args(app, gpus, models)
    from mdm.memory import cache_key

    sim_cfg = gpus[0] if sim_gpu is None else sim_gpu
    timing = sim_gpu is None
    key = cache_key(sim_cfg, timing)
    for other in gpus:
        if cache_key(other, timing) != key:
            raise ValueError(
                f"configurations {sim_cfg.name!r} and {other.name!r} need different cache "
                "simulations (mdm.memory.cache_key differs)"
            )
    instances = {m: get_model(m) for m in models}
    kernels: Iterator[PreparedKernel]
    if isinstance(app, PreparedApp):
        n_k, kernels = len(app.kernels), iter(app.kernels)
    else:
        n_k, kernels = app.n_kernels, _prepared_stream(app)
    if cache is not None and len(cache.kernels) != n_k:
        raise ValueError(
            f"cache simulation has {len(cache.kernels)} kernels, the application {n_k}"
        )
    if cache is None:
        from mdm.memory import AppSimulator

        sim = AppSimulator(sim_cfg)

    def stats_of(pk: PreparedKernel) -> KernelCacheStats:
        if cache is not None:
            return cache.kernels[pk.index]
        for c in pk.copies:  # the copies listed before the kernel
            sim.copy(c)
        return sim.simulate(pk.kernel)

    inputs: list[list[KernelInput]] = [[] for _ in gpus]
    preds: list[dict[str, list[KernelPrediction]]] = [{m: [] for m in instances} for _ in gpus]
    for pk in kernels:
        stats = stats_of(pk)
        if pk.total_warp_insts > 0:
            profiles: dict[tuple, Any] = {}  # this kernel's, on these stats
            for g, gpu in enumerate(gpus):
                inp = kernel_input(pk, gpu, stats, merge_threshold, nregs_policy, profiles)
                inputs[g].append(inp)
                for m, inst in instances.items():
                    preds[g][m].append(with_launch(inst.predict_kernel(inp), gpu))
        if on_kernel is not None:
            on_kernel(pk.kernel.name)
        del pk  # not kept alive while the next kernel is read
    if not inputs[0]:
        raise EmptyInputError(f"application {app.name!r} has no instructions to predict")
    return [
        AppPrediction(app=app.name, gpu=gpu.name, kernels=preds[g], inputs=inputs[g])
        for g, gpu in enumerate(gpus)
    ]
