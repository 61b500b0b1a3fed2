"""Regular 1-D kernels: ``stride`` (paper 001 Listing 1), ``vecadd``, ``gather``, ``kmeans``.

The SASS sequences (PCs, opcodes, registers, loop shape) reproduce the Pascal
reference traces under ``../shared/reference/traces/sm61/<w>`` so that, with the
reference's generator parameters, the warp and thread instruction counts match its
``summary.json``.
"""

from __future__ import annotations

import numpy as np

from mdm.traces.model import AppTrace, Memcpy
from mdm.traces.workloads._emit import (
    MAX_SHMEM_PER_BLOCK,
    Active,
    Emitter,
    Geometry,
    array_bases,
    build_kernel,
    check_param,
    prologue_1d,
)

_I64 = np.int64


def _geometry(ctas: int, threads: int) -> Geometry:
    check_param("ctas", ctas)
    check_param("threads", threads, 1, 1024)
    return Geometry((ctas, 1, 1), (threads, 1, 1))


def _grid_stride_trips(g: Geometry, n: int) -> np.ndarray:
    """Per-lane trip count of ``for (i = ix; i < n; i += gridDim.x * blockDim.x)``."""
    total = g.grid[0] * g.block[0]
    trips = np.where(g.ix < n, (n - g.ix + total - 1) // total, 0)
    return np.where(g.valid, trips, 0)


def _grid_stride_entry(g: Geometry, em: Emitter, n: int, exit_pc: int) -> np.ndarray:
    """Entry of a 1-D grid-stride loop over ``n`` elements (PCs 0x00-0x90, ``exit_pc``).

    ``ix`` into R0, the ``ix < n`` test with an ``EXIT`` for lanes without work, and
    the stride ``gridDim.x * blockDim.x`` into R8. Returns the per-lane trip counts.
    """
    trips = _grid_stride_trips(g, n)
    act = g.all()
    prologue_1d(em, act)
    em.op(0x60, "ISETP.GE.AND", (), (0,), act)
    act_in = Active(trips > 0)
    em.op(exit_pc, "EXIT", (), (), act.minus(act_in))
    em.op(0x70, "XMAD.MRG", (8,), (2,), act_in)
    em.op(0x80, "XMAD", (8,), (2,), act_in)
    em.op(0x90, "XMAD.PSL.CBCC", (8,), (2, 8, 8), act_in)
    return trips


def _loop_end(em: Emitter, bra_pc: int, exit_pc: int, act: Active, cont: Active) -> None:
    """Loop back-edge: ``BRA`` for lanes that go on, ``EXIT`` for those that are done."""
    em.op(bra_pc, "BRA", (), (), cont)
    em.op(exit_pc, "EXIT", (), (), act.minus(cont))


def stride(
    seed: int = 0, *, ctas: int = 448, threads: int = 256, n: int = 3, gs: int = 32
) -> AppTrace:
    """Paper 001 Listing 1: ``output[tid][i] = input[GS*ix + i]^2`` for ``i < n``.

    GS = 1: a warp's load reads 32 consecutive words (non-divergent): one 128 B line at
    ``i = 0``, two for ``i > 0``, which shifts them off the line boundary; GS = 32: 32
    lines.
    ``output`` is the ``__shared__ float[blockDim.x][n]`` array (STS at ``4*(tid*n+i)``).
    No bounds check (as in the listing); ``seed`` is unused (no randomness).
    """
    del seed
    g = _geometry(ctas, threads)
    check_param("n", n, 1, 4096)
    check_param("gs", gs)
    shmem = threads * n * 4  # the __shared__ output array
    if shmem > MAX_SHMEM_PER_BLOCK:
        raise ValueError(
            f"parameter n={n} with threads={threads} needs {shmem:,} B of shared "
            f"memory per block (threads x n x 4), more than any GPU gives a block "
            f"({MAX_SHMEM_PER_BLOCK:,} B, compute capability 9.0): n <= "
            f"{MAX_SHMEM_PER_BLOCK // (4 * threads)}"
        )
    total = ctas * threads
    in_bytes = 4 * (gs * (total - 1) + n)
    (base,) = array_bases([in_bytes])

    def _body(g: Geometry, em: Emitter) -> None:
        act = g.all()
        prologue_1d(em, act)
        # GS * ix: a move for GS = 1, a shift for powers of two, else an integer multiply.
        mul = "MOV" if gs == 1 else ("SHL" if gs & (gs - 1) == 0 else "XMAD")
        em.op(0x60, mul, (4,), (0,), act)
        em.op(0x70, "XMAD.MRG", (5,), (3,), act)
        em.op(0x80, "XMAD", (5,), (3,), act)
        em.op(0x90, "XMAD.PSL.CBCC", (5,), (3, 5, 5), act)
        em.op(0xA0, "MOV", (6,), (), act)
        ix = g.ix.astype(np.uint64)
        tid = g.tid.astype(np.uint64)
        for i in range(n):
            em.op(0xB0, "IADD", (7,), (4, 6), act)
            em.op(0xC0, "SHL", (8,), (7,), act)
            em.op(0xD0, "SHR", (9,), (7,), act)
            em.op(0xE0, "IADD.CC", (8,), (8,), act)
            em.op(0xF0, "IADD.X", (9,), (9,), act)
            addr = np.uint64(base) + np.uint64(4) * (np.uint64(gs) * ix + np.uint64(i))
            em.op(0x100, "LDG.E", (10,), (8,), act, addr, 4)
            em.op(0x110, "FMUL", (11,), (10, 10), act)
            em.op(
                0x120,
                "STS",
                (),
                (5, 11),
                act,
                np.uint64(4) * (tid * np.uint64(n) + np.uint64(i)),
                4,
            )
            em.op(0x130, "IADD", (6,), (6,), act)
            em.op(0x140, "IADD", (5,), (5,), act)
            em.op(0x150, "ISETP.LT.AND", (), (6,), act)
            if i + 1 < n:
                em.op(0x160, "BRA", (), (), act)
            else:
                em.op(0x170, "EXIT", (), (), act)

    kt = build_kernel(
        g,
        _body,
        name=f"strided_square_kernel_GS{gs}(float const*, int)",
        kernel_id=1,
        nregs=16,
        shmem_bytes=shmem,
    )
    return AppTrace([Memcpy(base, in_bytes), kt], name=f"stride{gs}")


def vecadd(
    seed: int = 0, *, ctas: int = 448, threads: int = 256, iters: int = 3, tail: int = 3000
) -> AppTrace:
    """``c[i] = a[i] + b[i]``, grid-stride loop over ``n = ctas*threads*iters - tail``.

    ``tail`` makes ``n`` a non-multiple of the grid so the last pass has a partial warp
    and warps with fewer trips (the default 3000 is the reference generator's choice).
    """
    del seed
    g = _geometry(ctas, threads)
    check_param("iters", iters)
    total = ctas * threads
    n = check_param("n = ctas*threads*iters - tail", total * iters - tail)
    check_param("tail", tail, 0)
    a, b, c = array_bases([4 * n] * 3)

    def _body(g: Geometry, em: Emitter) -> None:
        trips = _grid_stride_entry(g, em, n, exit_pc=0x190)
        for j in range(int(trips.max(initial=0))):
            act = Active(trips > j)
            off = np.uint64(4) * (g.ix + j * total).astype(np.uint64)
            em.op(0xA0, "SHL", (4,), (0,), act)
            em.op(0xB0, "SHR", (5,), (0,), act)
            em.op(0xC0, "IADD.CC", (6,), (4,), act)
            em.op(0xD0, "IADD.X", (7,), (5,), act)
            em.op(0xE0, "IADD.CC", (10,), (4,), act)
            em.op(0xF0, "IADD.X", (11,), (5,), act)
            em.op(0x100, "LDG.E", (6,), (6,), act, np.uint64(a) + off, 4)
            em.op(0x110, "LDG.E", (10,), (10,), act, np.uint64(b) + off, 4)
            em.op(0x120, "IADD.CC", (12,), (4,), act)
            em.op(0x130, "IADD.X", (13,), (5,), act)
            em.op(0x140, "FADD", (9,), (6, 10), act)
            em.op(0x150, "STG.E", (), (12, 9), act, np.uint64(c) + off, 4)
            em.op(0x160, "IADD", (0,), (0, 8), act)
            em.op(0x170, "ISETP.LT.AND", (), (0,), act)
            _loop_end(em, 0x180, 0x190, act, Active(trips > j + 1))

    kt = build_kernel(
        g,
        _body,
        name="vecAdd(float const*, float const*, float*, int)",
        kernel_id=1,
        nregs=16,
        shmem_bytes=0,
    )
    return AppTrace([Memcpy(a, 4 * n), Memcpy(b, 4 * n), kt], name="vecadd")


def gather_indices(seed: int, n: int, xsize: int) -> np.ndarray:
    """``gather``'s ``idx[n]``: uniform in ``[0, xsize)``, from ``default_rng(seed)``
    (also the input of the hardware harness under ``benchmarks/hardware``)."""
    return np.random.default_rng(seed).integers(0, xsize, size=n, dtype=np.int64)


def gather(
    seed: int = 0,
    *,
    ctas: int = 448,
    threads: int = 256,
    iters: int = 2,
    xsize: int = 1 << 20,
    tail: int = 1000,
) -> AppTrace:
    """``y[i] = x[idx[i]]`` with ``idx`` uniform in ``[0, xsize)``; grid-stride loop.

    ``n = ctas*threads*iters - tail`` (default tail 1000 as the reference generator).
    The ``idx`` load is coalesced (streaming); the ``x`` load is a random gather.
    """
    g = _geometry(ctas, threads)
    check_param("iters", iters)
    check_param("xsize", xsize)
    check_param("tail", tail, 0)
    total = ctas * threads
    n = check_param("n = ctas*threads*iters - tail", total * iters - tail)
    idx = gather_indices(seed, n, xsize)
    pidx, px, py = array_bases([4 * n, 4 * xsize, 4 * n])

    def _body(g: Geometry, em: Emitter) -> None:
        trips = _grid_stride_entry(g, em, n, exit_pc=0x1A0)
        for j in range(int(trips.max(initial=0))):
            act = Active(trips > j)
            i = g.ix + j * total
            off = np.uint64(4) * i.astype(np.uint64)
            xi = idx[np.minimum(i, n - 1)].astype(np.uint64)
            em.op(0xA0, "SHL", (4,), (0,), act)
            em.op(0xB0, "SHR", (5,), (0,), act)
            em.op(0xC0, "IADD.CC", (6,), (4,), act)
            em.op(0xD0, "IADD.X", (7,), (5,), act)
            em.op(0xE0, "LDG.E", (10,), (6,), act, np.uint64(pidx) + off, 4)
            em.op(0xF0, "SHL", (12,), (10,), act)
            em.op(0x100, "SHR", (13,), (10,), act)
            em.op(0x110, "IADD.CC", (12,), (12,), act)
            em.op(0x120, "IADD.X", (13,), (13,), act)
            em.op(0x130, "LDG.E", (14,), (12,), act, np.uint64(px) + np.uint64(4) * xi, 4)
            em.op(0x140, "IADD.CC", (12,), (4,), act)
            em.op(0x150, "IADD.X", (13,), (5,), act)
            em.op(0x160, "STG.E", (), (12, 14), act, np.uint64(py) + off, 4)
            em.op(0x170, "IADD", (0,), (0, 8), act)
            em.op(0x180, "ISETP.LT.AND", (), (0,), act)
            _loop_end(em, 0x190, 0x1A0, act, Active(trips > j + 1))

    kt = build_kernel(
        g,
        _body,
        name="gather_kernel(float const*, int const*, float*, int)",
        kernel_id=1,
        nregs=16,
        shmem_bytes=0,
    )
    return AppTrace([Memcpy(px, 4 * xsize), Memcpy(pidx, 4 * n), kt], name="gather")


def kmeans(
    seed: int = 0,
    *,
    ctas: int = 448,
    threads: int = 256,
    nf: int = 16,
    k: int = 3,
    tail: int = 0,
) -> AppTrace:
    """k-means assignment, point-major features: thread ``p`` reads ``f[p*nf + j]``.

    Consecutive lanes are ``nf*4`` bytes apart, so each feature load of a warp touches
    ``32*nf*4/128`` lines (memory-divergent for ``nf >= 2``). The ``k`` centroid
    distances are unrolled (centroids are constant-bank operands, as in the reference);
    ``npoints = ctas*threads - tail``. ``seed`` is unused.
    """
    del seed
    g = _geometry(ctas, threads)
    check_param("nf", nf, 1, 200)
    check_param("k", k, 1, 64)
    check_param("tail", tail, 0)
    npts = check_param("npoints = ctas*threads - tail", ctas * threads - tail)
    pf, pm = array_bases([4 * npts * nf, 4 * npts])

    def _body(g: Geometry, em: Emitter) -> None:
        act = g.all()
        end_pc = 0x100 + 0x10 * (nf + k * (2 * nf + 3)) + 0x50
        prologue_1d(em, act)
        em.op(0x60, "ISETP.GE.AND", (), (0,), act)
        act_in = Active(g.valid & (g.ix < npts))
        em.op(end_pc, "EXIT", (), (), act.minus(act_in))
        act = act_in
        em.op(0x70, "XMAD.MRG", (4,), (0,), act)
        em.op(0x80, "XMAD", (4,), (0,), act)
        em.op(0x90, "XMAD.PSL.CBCC", (4,), (0, 4, 4), act)
        em.op(0xA0, "SHL", (6,), (4,), act)
        em.op(0xB0, "SHR", (7,), (4,), act)
        em.op(0xC0, "IADD.CC", (6,), (6,), act)
        em.op(0xD0, "IADD.X", (7,), (7,), act)
        row = np.uint64(pf) + np.uint64(4 * nf) * g.ix.astype(np.uint64)
        pc = 0xE0
        for f in range(nf):
            em.op(pc, "LDG.E", (10 + f,), (6,), act, row + np.uint64(4 * f), 4)
            pc += 0x10
        best, arg, t, d = 10 + nf, 11 + nf, 12 + nf, 13 + nf
        em.op(pc, "MOV", (best,), (), act)
        em.op(pc + 0x10, "MOV", (arg,), (), act)
        pc += 0x20
        for _c in range(k):
            for f in range(nf):
                em.op(pc, "FADD", (t,), (10 + f,), act)
                if f == 0:
                    em.op(pc + 0x10, "FMUL", (d,), (t, t), act)
                else:
                    em.op(pc + 0x10, "FFMA", (d,), (t, t, d), act)
                pc += 0x20
            em.op(pc, "FSETP.LT.AND", (), (d, best), act)
            em.op(pc + 0x10, "FSEL", (best,), (d, best), act)
            em.op(pc + 0x20, "SEL", (arg,), (arg,), act)
            pc += 0x30
        a0, a1 = 14 + nf, 15 + nf
        em.op(pc, "SHL", (a0,), (0,), act)
        em.op(pc + 0x10, "SHR", (a1,), (0,), act)
        em.op(pc + 0x20, "IADD.CC", (a0,), (a0,), act)
        em.op(pc + 0x30, "IADD.X", (a1,), (a1,), act)
        out = np.uint64(pm) + np.uint64(4) * g.ix.astype(np.uint64)
        em.op(pc + 0x40, "STG.E", (), (a0, arg), act, out, 4)
        assert pc + 0x50 == end_pc
        em.op(end_pc, "EXIT", (), (), act)

    kt = build_kernel(
        g,
        _body,
        name="kmeansPoint(float*, int, int, int, int*, float*, float*, int*)",
        kernel_id=1,
        nregs=16 + nf,
        shmem_bytes=0,
    )
    return AppTrace([Memcpy(pf, 4 * npts * nf), kt], name="kmeans")
