"""Parser of Accel-Sim / GPGPU-Sim output logs (plain, ``.xz`` or ``.gz``).

Each kernel's statistics block starts at a ``kernel_name = ...`` line. Within a block
every ``name = number`` line is kept under its name; the cache breakdown lines are
renamed the way the reference ``.json`` twins name them:

* ``Total_core_cache_stats_breakdown[A][B] = n``      -> ``TC_A_B``
* ``Total_core_cache_fail_stats_breakdown[A][B] = n`` -> ``TCF_A_B``
* ``L2_cache_stats_breakdown[A][B] = n``              -> ``L2_A_B``
* ``L2_cache_stats_fail_breakdown[A][B] = n``         -> ``L2F_A_B``

Per-core / per-bank lines and histograms are ignored. Counters in a block are the
simulator's cumulative or per-kernel values exactly as printed.

:func:`log_options` reads the option dump GPGPU-Sim prints before the first kernel
(``-name value # description``): the values a run actually used, command-line
overrides included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from mdm.config.accelsim import open_text, read_log_options
from mdm.errors import TraceFormatError

_KV = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_ ]*?)\s*=\s*(-?[0-9.]+(?:[eE][-+]?\d+)?)\s*$")
_BREAK = re.compile(
    r"^\s*(Total_core_cache_stats_breakdown|Total_core_cache_fail_stats_breakdown|"
    r"L2_cache_stats_breakdown|L2_cache_stats_fail_breakdown)\[(\w+)\]\[(\w+)\]\s*=\s*(-?\d+)\s*$"
)
_PREFIX = {
    "Total_core_cache_stats_breakdown": "TC",
    "Total_core_cache_fail_stats_breakdown": "TCF",
    "L2_cache_stats_breakdown": "L2",
    "L2_cache_stats_fail_breakdown": "L2F",
}
_REQUIRED = ("gpu_sim_cycle", "gpu_sim_insn", "gpu_tot_sim_cycle", "gpu_tot_sim_insn")


@dataclass
class KernelStats:
    """Statistics block of one kernel."""

    name: str
    stats: dict[str, float] = field(default_factory=dict)


@dataclass
class AccelSimLog:
    """Parsed log: kernels in launch order plus the run totals."""

    path: Path
    kernels: list[KernelStats]

    @property
    def tot_sim_cycle(self) -> float:
        """``gpu_tot_sim_cycle`` of the last kernel: cycles of all kernels."""
        return self.kernels[-1].stats["gpu_tot_sim_cycle"]

    @property
    def tot_sim_insn(self) -> float:
        """``gpu_tot_sim_insn`` of the last kernel: thread instructions of all kernels."""
        return self.kernels[-1].stats["gpu_tot_sim_insn"]

    @property
    def kernel_cycles(self) -> list[float]:
        return [k.stats["gpu_sim_cycle"] for k in self.kernels]


def parse_log(path: str | Path) -> AccelSimLog:
    """Parse an Accel-Sim output log into per-kernel statistics.

    Raises :class:`TraceFormatError` (file, line, expectation) when a kernel block
    lacks one of ``gpu_sim_cycle``, ``gpu_sim_insn``, ``gpu_tot_sim_cycle``,
    ``gpu_tot_sim_insn`` or the file has no kernel block at all.
    """
    path = Path(path)
    kernels: list[KernelStats] = []
    starts: list[int] = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("kernel_name"):
                _, _, name = line.partition("=")
                kernels.append(KernelStats(name.strip()))
                starts.append(lineno)
                continue
            if not kernels or "=" not in line:
                continue
            m = _BREAK.match(line)
            if m:
                kernels[-1].stats[f"{_PREFIX[m.group(1)]}_{m.group(2)}_{m.group(3)}"] = float(
                    m.group(4)
                )
                continue
            m = _KV.match(line)
            if m:
                kernels[-1].stats.setdefault(m.group(1), float(m.group(2)))
    if not kernels:
        raise TraceFormatError(path, None, "no 'kernel_name = ...' statistics block found")
    for k, start in zip(kernels, starts, strict=True):
        missing = [r for r in _REQUIRED if r not in k.stats]
        if missing:
            raise TraceFormatError(
                path,
                start,
                f"kernel block {k.name!r} lacks {', '.join(missing)} "
                "(expected 'name = number' lines)",
            )
    return AccelSimLog(path, kernels)


def log_options(path: str | Path, names: tuple[str, ...] | None = None) -> dict[str, str]:
    """The ``-name value`` lines of the option dump at the head of an Accel-Sim log
    (``names``: only those); ``{}`` when the log has no dump before its first kernel
    (:func:`mdm.config.accelsim.read_log_options`). The dump holds every
    option's effective value, the defaults and the command line's overrides included,
    which a results table may not list."""
    return {k: v for k, (v, _) in read_log_options(path).items() if names is None or k in names}
