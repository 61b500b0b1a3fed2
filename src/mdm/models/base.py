"""One interface for every performance model, and the registry.

A model turns a :class:`KernelInput` (profile + configuration + memory statistics
+ occupancy of one kernel) into a :class:`KernelPrediction`. Adding a model means
one module that subclasses :class:`Model` with the ``@register`` decorator, and that
module's name in ``mdm/models/_load_builtin.py`` (the registry's list of built-in
modules, imported by :func:`get_model` and :func:`model_names`). A model kept outside
the package registers when its module is imported, in that process only.

Conventions:

* ``cycles`` are core cycles of the whole kernel on the whole GPU.
* ``ipc`` is *warp* instructions per core cycle of the whole GPU (multiply by the
  mean active lanes for thread IPC; the relative error of eq. 11 is the same).
* ``cpi_stack`` maps component names to cycles per warp instruction of the whole
  GPU; the components sum to ``cycles / warp_insts``. Interval models use at least
  ``base``, ``dependency``, ``mshr``, ``noc``, ``dram``; the pipeline adds ``launch``
  to every model's kernels when the configuration has a launch overhead
  (:func:`with_launch`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from mdm.config.gpu import GPUConfig
from mdm.memory.stats import KernelCacheStats
from mdm.profile.intervals import IntervalProfile


@dataclass(frozen=True)
class InstructionMix:
    """Per-warp average instruction counts of a kernel, by role (for MWP-CWP and rooflines)."""

    total: float  # warp instructions per warp
    compute: float  # non-memory instructions
    global_loads: float
    global_stores: float
    shared: float  # shared-memory loads and stores
    barriers: float
    coalesced_mem: float  # global memory instructions generating one request per line... (see docs)
    uncoalesced_mem: float
    requests_per_uncoalesced: float  # mean coalesced requests of an uncoalesced memory instruction


@dataclass(frozen=True)
class KernelInput:
    """Everything a model may use to predict one kernel on one configuration."""

    name: str
    gpu: GPUConfig
    profile: IntervalProfile  # representative warp
    warps_per_sm: int  # W: concurrent warps per active SM (occupancy)
    blocks_per_sm: int  # concurrent blocks per SM
    active_sms: int  # SMs that receive at least one block
    n_blocks: int
    warps_per_block: int
    total_warp_insts: int  # whole kernel
    total_thread_insts: int
    mix: InstructionMix
    cache: KernelCacheStats
    # what limits blocks_per_sm: a resource of mdm.profile.occupancy ("threads", "warps",
    # "blocks", "registers", "shared_memory"), "grid" (fewer blocks than slots), or ""
    occupancy_limit: str = ""
    # per shared-memory PC of the representative warp, mean bank passes per execution
    # (1: no conflict; mdm.profile.interval.shared_bank_passes), for reports
    shared_bank_passes: dict[int, float] = field(default_factory=dict)
    # single-warp cycles, on this configuration, of the warp that takes longest alone
    # (mdm.profile.interval.warp_cycles of PreparedKernel.long_warp): no execution of
    # the kernel ends sooner (the roofline's latency bound); 0 when not known
    longest_warp_cycles: float = 0.0

    @property
    def n_warps(self) -> int:
        return self.n_blocks * self.warps_per_block

    @property
    def waves(self) -> float:
        """Fractional number of waves of blocks over the active SMs."""
        return self.n_blocks / (self.blocks_per_sm * self.active_sms)


@dataclass
class KernelPrediction:
    model: str
    kernel: str
    cycles: float
    warp_insts: int
    cpi_stack: dict[str, float]
    # share of the representative warp's intervals that are MD (eq. 2); None for models
    # that do not classify intervals (MWP-CWP, the roofline)
    md_fraction: float | None = None
    details: dict[str, float] = field(default_factory=dict)

    @property
    def ipc(self) -> float:
        return self.warp_insts / self.cycles


class Model(ABC):
    """Base class of all models. Subclasses set ``name`` and implement ``predict_kernel``."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    # True when the theory says more NoC/DRAM bandwidth never adds queueing stall
    # (checked by the contract test); MWP-CWP's eq. (23) is not monotone.
    queue_monotone: ClassVar[bool] = True

    @abstractmethod
    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        """Predict one kernel."""


MODELS: dict[str, type[Model]] = {}


def register(cls: type[Model]) -> type[Model]:
    """Class decorator adding a model to :data:`MODELS` under ``cls.name``."""
    if cls.name in MODELS:
        raise ValueError(f"model {cls.name!r} registered twice")
    MODELS[cls.name] = cls
    return cls


def get_model(name: str) -> Model:
    """A new instance of the registered model ``name``."""
    try:
        return MODELS[name]() if name in MODELS else _load()[name]()
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(model_names())}") from None


def model_names() -> list[str]:
    """The registered models' names, sorted: the built-in ones and any registered since."""
    return sorted(_load())


def unknown_models(names: Sequence[str], where: str) -> str | None:
    """``None`` when every one of ``names`` is registered, else the message naming the
    unknown ones (``where``: the option or field that gave them), each with the name it
    is closest to (case ignored: ``MDM`` -> ``mdm``), and the known names."""
    import difflib

    known = model_names()
    bad = [n for n in names if n not in known]
    if not bad:
        return None
    lower = {k.lower(): k for k in known}
    hints = []
    for n in bad:
        close = difflib.get_close_matches(n.lower(), list(lower), n=1, cutoff=0.6)
        hints.append(f"{n!r} (did you mean {lower[close[0]]!r}?)" if close else repr(n))
    return f"{where}: unknown model(s) {', '.join(hints)}; known: {', '.join(known)}"


def _load() -> dict[str, type[Model]]:
    from mdm.models import _load_builtin  # noqa: F401  (imports the built-in models)

    return MODELS


def with_launch(pred: KernelPrediction, gpu: GPUConfig) -> KernelPrediction:
    """``pred`` plus the configuration's fixed kernel overhead (``kernel_launch_ns``: the
    launch and the completion, measured as the part of empty kernels' duration that does
    not grow with their blocks), as the CPI-stack component ``launch``; unchanged when
    it is 0.

    Beyond the papers (their simulators ran without launch overhead): on hardware a
    kernel of short blocks spends a large share of its time there. It does not overlap
    the kernel's work, and the models start every warp at cycle 0, so it is added.
    """
    launch = gpu.kernel_launch_cycles
    if launch <= 0:
        return pred
    stack = dict(pred.cpi_stack)
    stack["launch"] = stack.get("launch", 0.0) + launch / pred.warp_insts
    return replace(pred, cycles=pred.cycles + launch, cpi_stack=stack)


def combine_predictions(preds: list[KernelPrediction], kernel: str = "total") -> KernelPrediction:
    """Application-level prediction of several kernels of one model (paper 001 Section III-C).

    Cycles and instructions add up, so IPC is total instructions over total cycles;
    the CPI stack is the instruction-weighted mean of the kernels' stacks (it still
    sums to ``cycles / warp_insts``) and ``md_fraction`` the instruction-weighted mean
    (None when the model gives none).
    """
    if not preds:
        raise ValueError("combine_predictions needs at least one kernel prediction")
    models = {p.model for p in preds}
    if len(models) != 1:
        raise ValueError(f"cannot combine predictions of different models: {sorted(models)}")
    insts = sum(p.warp_insts for p in preds)
    cycles = sum(p.cycles for p in preds)
    stack: dict[str, float] = {}
    md = [(p.md_fraction, p.warp_insts) for p in preds if p.md_fraction is not None]
    for p in preds:
        for k, v in p.cpi_stack.items():
            stack[k] = stack.get(k, 0.0) + v * p.warp_insts
    return KernelPrediction(
        model=preds[0].model,
        kernel=kernel,
        cycles=cycles,
        warp_insts=insts,
        cpi_stack={k: v / insts for k, v in stack.items()},
        md_fraction=sum(f * n for f, n in md) / insts if len(md) == len(preds) else None,
        details={"kernels": float(len(preds))},
    )
