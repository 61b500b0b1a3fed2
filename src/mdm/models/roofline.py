"""Roofline bound: the fewest cycles any kernel execution can take.

``cycles = max(compute, NoC, DRAM, latency, L2 MSHRs)`` with

* compute: ``total_warp_insts x`` :func:`sm_cycles_per_inst` ``/ active_sms``, the
  whole kernel issued at the SMs' peak rate: ``1 / (schedulers x issue_width)`` cycles
  per warp instruction times :func:`issue_factor` (dual issue only for pairable
  instructions), or the execution units' rate when slower (initiation intervals);
* NoC: ``l2_accesses * l2_access_bytes / B``, every L2 access (reads and writes, from
  the cache statistics) moving its data over the NoC bandwidth ``B`` the active SMs
  can use (:func:`noc_bytes_per_cycle`: total, or the SMs' ejection ports if fewer):
  a sector for a sectored L2 (the cache simulation counts one access per sector: a
  non-sectored L1's line miss is 4 of them), else the L1 request (a line, or a sector
  for a sectored L1);
* DRAM: ``(dram_read_bytes + dram_write_bytes) / dram_bytes_per_cycle``;
* latency: :attr:`~mdm.models.base.KernelInput.longest_warp_cycles`, the single-warp
  cycles of the warp that takes longest alone (its instructions at the full issue
  width and its uncontended stalls, with the configuration's latencies): a kernel ends
  only when its last warp does, however many SMs and however much bandwidth it has.
* L2 MSHRs: ``l2_mshr_allocations x L^MinDRAM / (l2.banks x l2.mshr_per_bank)``,
  Little's law on the L2's MSHR entries: each DRAM fetch that takes an entry
  (``KernelCacheStats.l2_mshr_allocations``) holds it at least the uncontended DRAM
  round trip (``dram.latency_ns``), and the banks hold at most ``banks x mshr_per_bank``
  at a time. Summed over the banks, so a lower bound however unevenly they are used.

The L2-MSHR bound (decided here; no equation of the papers) is what makes a design
sweep over ``l2.mshr_per_bank`` reach the models: none of them has an L2 MSHR term, so
before it ``mdm predict builtin:kmeans --gpu mdm_pascal --set l2.mshr_per_bank=1``
stayed within 0.1 % of the preset's 128 entries while the cache simulation's own time
line grew tenfold. Its excess goes to ``dram`` in the CPI stacks (the DRAM reads the
L2 can keep in flight); at the presets' 128-256 entries per bank it binds on no
reference run.

The latency bound (an addition to the throughput roofline, decided here) matters where
the representative warp is much shorter than the kernel's longest: GPUMech's selection
takes the largest cluster, which can be the idle warps of a kernel whose few busy warps
decide its time (``builtin:vecadd?ctas=4``: 72 elements on 32 warps, 29 of them exit at
once; every interval model predicted 19 cycles, less than one L2 hit, before it).

Every other model is floored at this bound (see :mod:`mdm.models.interval`).
The CPI stack puts the compute bound in ``base`` and the excess of the binding
memory bound in ``noc`` or ``dram``, of the latency bound in ``dependency``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdm.config.gpu import GPUConfig
from mdm.models.base import KernelInput, KernelPrediction, Model, register


def noc_bytes_per_cycle(gpu: GPUConfig, sms: int) -> float:
    """L2-to-SM bandwidth ``sms`` active SMs can use, bytes per core cycle.

    :meth:`mdm.config.gpu.GPUConfig.noc_gbps` ``/ core GHz``: at most
    ``noc.bandwidth_gbps`` and ``sms x noc.sm_port_gbps`` (each SM's ejection port
    carries one flit per cycle in the reference simulator, so few active SMs cannot
    draw the whole NoC bandwidth: reference README, bw_l2 with 14 SMs reaches 552
    GB/s, 14 ports x 44.8 = 627), and for a FIFO crossbar (``noc.fifo_crossbar``) the
    head-of-line-blocking limit.
    """
    return gpu.noc_gbps(sms) / gpu.core_clock_ghz


def request_bytes(gpu: GPUConfig) -> int:
    """Bytes one L1-to-L2 request moves: a sector for a sectored L1, else a line."""
    return gpu.l1.request_bytes


def l2_access_bytes(gpu: GPUConfig) -> int:
    """Bytes one L2 access of the cache statistics moves over the NoC: a sector for a
    sectored L2 (one access per sector), else one L1 request (:func:`request_bytes`)."""
    return gpu.l2.sector_bytes if gpu.l2.sectored else request_bytes(gpu)


@dataclass(frozen=True)
class RooflineBound:
    compute: float
    noc: float
    dram: float
    latency: float = 0.0
    l2_mshr: float = 0.0

    @property
    def cycles(self) -> float:
        return max(self.compute, self.noc, self.dram, self.latency, self.l2_mshr)

    @property
    def binding(self) -> str:
        """``base`` (compute), ``noc``, ``dram`` (DRAM bytes, or the L2 MSHRs) or
        ``dependency`` (latency): the CPI component of the largest bound (ties: the first
        in that order)."""
        named = (
            (self.compute, "base"),
            (self.noc, "noc"),
            (self.dram, "dram"),
            (self.latency, "dependency"),
            (self.l2_mshr, "dram"),
        )
        return max(named, key=lambda t: t[0])[1]


def issue_factor(inp: KernelInput) -> float:
    """Issue cycles per instruction relative to the full issue width, in [1, issue_width].

    ``issue_width x sum(issue_slots) / sum(n_insts)`` of the representative warp when
    it has issue slots (dual issue needs consecutive independent instructions,
    :mod:`mdm.profile.interval`), else 1 (the full width).
    """
    p = inp.profile
    total = p.total_insts
    if p.issue_slots is None or total <= 0:
        return 1.0
    return inp.gpu.sm.issue_width * float(p.issue_slots.sum()) / total


def sm_cycles_per_inst(inp: KernelInput) -> float:
    """Cycles one SM needs per warp instruction at its peak rate: the issue bound
    ``issue_factor / (schedulers x issue_width)``, or the execution units' bound when
    slower, ``max(unit_totals) / (schedulers x sum(n_insts))`` of the representative
    warp (``unit_totals``: the warp's cycles on each unit, one scheduler's share, from
    the units' initiation intervals, :mod:`mdm.profile.interval`; its busiest unit)."""
    sm = inp.gpu.sm
    c = issue_factor(inp) / (sm.schedulers * sm.issue_width)
    p = inp.profile
    total = p.total_insts
    if p.unit_totals is not None and total > 0 and p.unit_totals.size:
        c = max(c, float(p.unit_totals.max()) / (sm.schedulers * total))
    return c


def l2_mshr_cycles(inp: KernelInput) -> float:
    """The L2-MSHR bound (module docstring): Little's law on the L2's MSHR entries."""
    l2 = inp.gpu.l2
    entries = l2.banks * l2.mshr_per_bank
    return inp.cache.l2_mshr_allocations * inp.gpu.dram_latency_cycles / entries


def roofline_bound(inp: KernelInput) -> RooflineBound:
    """The five bounds of ``inp`` in core cycles (module docstring)."""
    gpu = inp.gpu
    if inp.active_sms < 1:
        raise ValueError(f"kernel {inp.name!r}: active_sms must be >= 1, got {inp.active_sms}")
    compute = inp.total_warp_insts * sm_cycles_per_inst(inp) / inp.active_sms
    noc = inp.cache.l2_accesses * l2_access_bytes(gpu) / noc_bytes_per_cycle(gpu, inp.active_sms)
    dram = (inp.cache.dram_read_bytes + inp.cache.dram_write_bytes) / gpu.dram_bytes_per_cycle
    return RooflineBound(
        float(compute),
        float(noc),
        float(dram),
        float(inp.longest_warp_cycles),
        float(l2_mshr_cycles(inp)),
    )


@register
class Roofline(Model):
    """max(compute issue bound, NoC and DRAM bytes / bandwidth, longest warp, L2 MSHRs)."""

    name = "roofline"
    description = "Roofline bound from the cache statistics (a lower bound on cycles)"

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        if inp.total_warp_insts <= 0:
            raise ValueError(f"kernel {inp.name!r}: total_warp_insts must be > 0")
        b = roofline_bound(inp)
        cycles = b.cycles
        stack = {"base": b.compute, "dependency": 0.0, "noc": 0.0, "dram": 0.0}
        if b.binding != "base":
            stack[b.binding] = cycles - b.compute
        n = inp.total_warp_insts
        return KernelPrediction(
            model=self.name,
            kernel=inp.name,
            cycles=cycles,
            warp_insts=n,
            cpi_stack={k: v / n for k, v in stack.items()},
            details={
                "compute_cycles": b.compute,
                "noc_cycles": b.noc,
                "dram_cycles": b.dram,
                "latency_cycles": b.latency,
                "l2_mshr_cycles": b.l2_mshr,
            },
        )
