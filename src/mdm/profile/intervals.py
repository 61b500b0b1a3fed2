"""Interval profile of one warp (pipeline step 2; model-notes section 1).

An interval is a run of instructions issued back to back followed by a stall;
interval ``i`` has ``n_insts[i]`` instructions and ``stall[i]`` stall cycles of the
warp running alone without contention. The memory columns are what MDM's
equations need per interval (paper 001 eqs. 2-3, 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class IntervalProfile:
    """Per-interval columns of the representative warp of one kernel."""

    n_insts: np.ndarray  # float64[I]: warp instructions in interval i
    stall: np.ndarray  # float64[I]: S_i, uncontended stall cycles ending interval i
    read_misses: np.ndarray  # float64[I]: M^Read_i, L1 read-miss requests (new MSHRs)
    write_reqs: np.ndarray  # float64[I]: M^Write_i, L1 write requests sent to L2
    l2_miss_rate: np.ndarray  # float64[I]: LLC miss ratio of the interval's L1 misses
    warp: int = -1  # index of the warp in the kernel trace (-1: synthetic)
    # float64[I] or None (unknown: no LD/ST bound): cycles interval i's memory
    # instructions hold the SM's one LD/ST unit (mdm.profile.interval docstring)
    ldst_cycles: np.ndarray | None = None
    # float64[I] or None (unknown: the scheduler's full issue width applies): cycles
    # interval i needs to issue its instructions when one scheduler issues a group of
    # consecutive independent instructions per cycle (mdm.profile.interval docstring)
    issue_slots: np.ndarray | None = None
    # float64[I] or None (not simulated: eq. 8's LLCMissRatio x BlockSize applies): DRAM
    # bytes the interval's L1 requests move, fetches and the write-backs of the dirty
    # lines they evict (per-PC averages, like the other memory columns)
    dram_bytes: np.ndarray | None = None
    # float64[I] or None (unknown: no execution-unit bound): cycles interval i keeps one
    # scheduler's share of its busiest execution unit busy (initiation intervals;
    # mdm.profile.interval docstring)
    unit_cycles: np.ndarray | None = None
    # float64[units] or None: the whole warp's cycles on each execution unit (one
    # scheduler's share; not a column): the roofline's unit bound, which per-interval
    # maxima summed would overstate when intervals are bound by different units
    unit_totals: np.ndarray | None = None
    # float64[I] or None (not computed): the most reads the warp sends to one L1 MSHR
    # entry (a line, or a sector of a sectored L1) in interval i, over the entries whose
    # first read in the interval misses (mdm.profile.interval docstring); what the L1's
    # merge limit (l1.mshr_max_merge) is checked against
    entry_reads: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = self.n_insts.shape
        for name in (
            "stall",
            "read_misses",
            "write_reqs",
            "l2_miss_rate",
            "ldst_cycles",
            "issue_slots",
            "dram_bytes",
            "unit_cycles",
            "entry_reads",
        ):
            if getattr(self, name) is not None and getattr(self, name).shape != n:
                raise ValueError(
                    f"IntervalProfile.{name} has shape {getattr(self, name).shape}, expected {n}"
                )

    @property
    def n_intervals(self) -> int:
        return int(self.n_insts.shape[0])

    @property
    def total_insts(self) -> float:
        return float(self.n_insts.sum())

    @property
    def total_stall(self) -> float:
        return float(self.stall.sum())

    @classmethod
    def from_lists(
        cls,
        n_insts: list[float],
        stall: list[float],
        read_misses: list[float] | None = None,
        write_reqs: list[float] | None = None,
        l2_miss_rate: list[float] | float = 0.0,
    ) -> IntervalProfile:
        """Build a profile by hand (tests, examples)."""
        n = np.asarray(n_insts, dtype=np.float64)
        zeros = np.zeros_like(n)
        # one rate for every interval (any scalar, numpy's included), or one per interval
        miss = np.asarray(l2_miss_rate, dtype=np.float64)
        if miss.ndim == 0:
            miss = np.full_like(n, float(miss))
        return cls(
            n_insts=n,
            stall=np.asarray(stall, dtype=np.float64),
            read_misses=zeros.copy()
            if read_misses is None
            else np.asarray(read_misses, dtype=np.float64),
            write_reqs=zeros.copy()
            if write_reqs is None
            else np.asarray(write_reqs, dtype=np.float64),
            l2_miss_rate=miss,
        )
