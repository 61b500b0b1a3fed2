"""Irregular, lane-divergent kernels on random data: ``spmv_csr`` and ``bfs``.

Both run one thread per row / node with a loop whose trip count differs by lane
(row nnz, node degree): lanes leave the loop at ``SYNC`` (reconvergence point set by
``SSY``) while the others go on at ``BRA``, as in the Pascal reference trace
``../shared/reference/traces/sm61/spmv_csr``.
"""

from __future__ import annotations

import numpy as np

from mdm.traces.model import AppTrace, Memcpy
from mdm.traces.workloads._emit import (
    Active,
    Emitter,
    Geometry,
    array_bases,
    build_kernel,
    check_param,
    prologue_1d,
)

_U = np.uint64


def random_csr(
    rng: np.random.Generator, rows: int, mean_extra: float, band_frac: float, band: int
) -> tuple[np.ndarray, np.ndarray]:
    """Random square CSR pattern: ``row_ptr[rows+1]``, ``col[nnz]`` (sorted per row).

    Row ``r`` has ``1 + Poisson(mean_extra)`` non-zeros; each column is, with
    probability ``band_frac``, within ``band`` of the diagonal, else uniform.
    """
    nnz_row = 1 + rng.poisson(mean_extra, size=rows)
    row_ptr = np.concatenate([[0], np.cumsum(nnz_row)]).astype(np.int64)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), nnz_row)
    near = rng.random(row_of.size) < band_frac
    off = rng.integers(-band, band + 1, size=row_of.size)
    far = rng.integers(0, rows, size=row_of.size)
    col = np.where(near, np.clip(row_of + off, 0, rows - 1), far)
    col = col[np.lexsort((col, row_of))]
    return row_ptr, col


def random_graph(
    rng: np.random.Generator,
    n: int,
    mean_degree: float,
    frontier_frac: float,
    visited_frac: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random graph and BFS level state: ``(deg, start_of, edges, frontier, visited)``.

    Node degree ``1 + Poisson(mean_degree - 1)``, neighbours uniform; ``start_of[n+1]``
    the CSR offsets; a node is in the frontier with probability ``frontier_frac`` and
    visited if in the frontier or with probability ``visited_frac``.
    """
    deg = 1 + rng.poisson(mean_degree - 1.0, size=n)
    start_of = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    edges = rng.integers(0, n, size=int(start_of[-1]))
    frontier = rng.random(n) < frontier_frac
    visited = frontier | (rng.random(n) < visited_frac)
    return deg, start_of, edges, frontier, visited


def _lane_gather(table: np.ndarray, start: np.ndarray, j: int, trips: np.ndarray) -> np.ndarray:
    """``table[start + j]`` per lane, 0 where the lane has no ``j``-th element."""
    pos = np.where(trips > j, start + j, 0)
    return np.where(trips > j, table[pos], 0)


def spmv_csr(
    seed: int = 0,
    *,
    ctas: int = 448,
    threads: int = 256,
    mean_extra: float = 1.5,
    band_frac: float = 0.6,
    band: int = 512,
    tail: int = 0,
) -> AppTrace:
    """Scalar CSR SpMV ``y = A x``: one thread per row, ``rows = ctas*threads - tail``.

    Loads ``row_ptr[r], row_ptr[r+1]``, then per non-zero ``col[j]``, ``val[j]`` and the
    gather ``x[col[j]]`` (``LDG.E.CI``); lanes leave the loop after their row's nnz.
    """
    check_param("ctas", ctas, 1)
    check_param("threads", threads, 1, 1024)
    check_param("mean_extra", mean_extra, 0.0, 1000.0)
    check_param("band_frac", band_frac, 0.0, 1.0)
    check_param("band", band, 0)
    check_param("tail", tail, 0)
    rows = ctas * threads - tail
    check_param("rows = ctas*threads - tail", rows, 1)
    rng = np.random.default_rng(seed)
    row_ptr, col = random_csr(rng, rows, mean_extra, band_frac, band)
    nnz = int(col.size)
    p_rp, p_col, p_val, p_x, p_y = array_bases(
        [4 * (rows + 1), 4 * nnz, 4 * nnz, 4 * rows, 4 * rows]
    )
    g = Geometry((ctas, 1, 1), (threads, 1, 1))

    def _body(g: Geometry, em: Emitter) -> None:
        r = g.ix
        inrow = g.valid & (r < rows)
        rr = np.where(inrow, r, 0)
        start = row_ptr[rr]
        trips = np.where(inrow, row_ptr[rr + 1] - start, 0)

        act = g.all()
        prologue_1d(em, act)
        em.op(0x60, "ISETP.GE.AND", (), (0,), act)
        act_in = Active(inrow)
        em.op(0x290, "EXIT", (), (), act.minus(act_in))
        act = act_in
        em.op(0x70, "SHL", (4,), (0,), act)
        em.op(0x80, "SHR", (5,), (0,), act)
        em.op(0x90, "IADD.CC", (6,), (4,), act)
        em.op(0xA0, "IADD.X", (7,), (5,), act)
        rp = _U(p_rp) + _U(4) * rr.astype(_U)
        em.op(0xB0, "LDG.E", (8,), (6,), act, rp, 4)
        em.op(0xC0, "LDG.E", (9,), (6,), act, rp + _U(4), 4)
        em.op(0xD0, "MOV", (10,), (), act)
        em.op(0xE0, "ISETP.GE.AND", (), (8, 9), act)
        em.op(0xF0, "SSY", (), (), act)
        em.op(0x100, "SHL", (12,), (8,), act)
        em.op(0x110, "SHR", (13,), (8,), act)
        em.op(0x120, "IADD.CC", (14,), (12,), act)
        em.op(0x130, "IADD.X", (15,), (13,), act)
        em.op(0x140, "IADD.CC", (16,), (12,), act)
        em.op(0x150, "IADD.X", (17,), (13,), act)
        for j in range(int(trips.max(initial=0))):
            act = Active(trips > j)
            at = (start + j).astype(_U) * _U(4)
            cj = _lane_gather(col, start, j, trips).astype(_U)
            em.op(0x160, "LDG.E", (18,), (14,), act, _U(p_col) + at, 4)
            em.op(0x170, "LDG.E", (19,), (16,), act, _U(p_val) + at, 4)
            em.op(0x180, "SHL", (20,), (18,), act)
            em.op(0x190, "SHR", (21,), (18,), act)
            em.op(0x1A0, "IADD.CC", (20,), (20,), act)
            em.op(0x1B0, "IADD.X", (21,), (21,), act)
            em.op(0x1C0, "LDG.E.CI", (22,), (20,), act, _U(p_x) + _U(4) * cj, 4)
            em.op(0x1D0, "IADD.CC", (14,), (14,), act)
            em.op(0x1E0, "IADD.X", (15,), (15,), act)
            em.op(0x1F0, "IADD.CC", (16,), (16,), act)
            em.op(0x200, "IADD.X", (17,), (17,), act)
            em.op(0x210, "IADD", (8,), (8,), act)
            em.op(0x220, "ISETP.LT.AND", (), (8, 9), act)
            em.op(0x230, "FFMA", (10,), (19, 22, 10), act)
            cont = Active(trips > j + 1)
            em.op(0x240, "BRA", (), (), cont)
            em.op(0x250, "SYNC", (), (), act.minus(cont))
        act = act_in
        em.op(0x260, "IADD.CC", (24,), (4,), act)
        em.op(0x270, "IADD.X", (25,), (5,), act)
        em.op(0x280, "STG.E", (), (24, 10), act, _U(p_y) + _U(4) * rr.astype(_U), 4)
        em.op(0x290, "EXIT", (), (), act)

    kt = build_kernel(
        g,
        _body,
        name="spmv_csr_scalar_kernel(int, int const*, int const*, float const*, float const*, float*)",
        kernel_id=1,
        nregs=26,
        shmem_bytes=0,
    )
    cmds: list = [
        Memcpy(p_rp, 4 * (rows + 1)),
        Memcpy(p_col, 4 * nnz),
        Memcpy(p_val, 4 * nnz),
        Memcpy(p_x, 4 * rows),
        kt,
    ]
    return AppTrace(cmds, name="spmv_csr")


def bfs(
    seed: int = 0,
    *,
    ctas: int = 128,
    threads: int = 256,
    mean_degree: float = 4.0,
    frontier_frac: float = 0.25,
    visited_frac: float = 0.5,
    tail: int = 0,
) -> AppTrace:
    """One BFS level (Rodinia-style, one thread per node) on a random graph.

    ``nodes = ctas*threads - tail``; node degree ``1 + Poisson(mean_degree - 1)``,
    neighbours uniform. Node ``v`` is in the frontier with probability
    ``frontier_frac``; a node is visited if it is in the frontier or with probability
    ``visited_frac``. Frontier threads clear their flag, load ``cost[v]`` and their
    ``{start, degree}`` record (``LDG.E.64``), then for each neighbour load it,
    gather ``visited[id]`` (1 byte), and the lanes whose neighbour is unvisited store
    ``cost[id]`` and ``updating[id]`` (lane masks shrink inside the iteration).
    """
    check_param("ctas", ctas, 1)
    check_param("threads", threads, 1, 1024)
    check_param("mean_degree", mean_degree, 1.0, 1000.0)
    check_param("frontier_frac", frontier_frac, 0.0, 1.0)
    check_param("visited_frac", visited_frac, 0.0, 1.0)
    check_param("tail", tail, 0)
    n = ctas * threads - tail
    check_param("nodes = ctas*threads - tail", n, 1)
    deg, start_of, edges, frontier, visited = random_graph(
        np.random.default_rng(seed), n, mean_degree, frontier_frac, visited_frac
    )
    p_node, p_edge, p_front, p_upd, p_vis, p_cost = array_bases(
        [8 * n, 4 * edges.size, n, n, n, 4 * n]
    )
    g = Geometry((ctas, 1, 1), (threads, 1, 1))

    def _body(g: Geometry, em: Emitter) -> None:
        v = np.where(g.valid & (g.ix < n), g.ix, 0)
        inr = g.valid & (g.ix < n)
        infront = inr & frontier[v]
        start = start_of[v]
        trips = np.where(infront, deg[v], 0)
        end_pc = 0x2F0

        act = g.all()
        prologue_1d(em, act)
        em.op(0x60, "ISETP.GE.AND", (), (0,), act)
        a_in = Active(inr)
        em.op(end_pc, "EXIT", (), (), act.minus(a_in))
        act = a_in
        vu = v.astype(_U)
        em.op(0x70, "IADD.CC", (6,), (0,), act)
        em.op(0x80, "IADD.X", (7,), (0,), act)
        em.op(0x90, "LDG.E.U8", (8,), (6,), act, _U(p_front) + vu, 1)
        em.op(0xA0, "ISETP.EQ.AND", (), (8,), act)
        a_f = Active(infront)
        em.op(end_pc, "EXIT", (), (), act.minus(a_f))
        act = a_f
        em.op(0xB0, "STG.E.U8", (), (6,), act, _U(p_front) + vu, 1)
        em.op(0xC0, "SHL", (4,), (0,), act)
        em.op(0xD0, "SHR", (5,), (0,), act)
        em.op(0xE0, "IADD.CC", (10,), (4,), act)
        em.op(0xF0, "IADD.X", (11,), (5,), act)
        em.op(0x100, "LDG.E", (12,), (10,), act, _U(p_cost) + _U(4) * vu, 4)
        em.op(0x110, "SHL", (14,), (0,), act)
        em.op(0x120, "SHR", (15,), (0,), act)
        em.op(0x130, "IADD.CC", (14,), (14,), act)
        em.op(0x140, "IADD.X", (15,), (15,), act)
        em.op(0x150, "LDG.E.64", (16, 17), (14,), act, _U(p_node) + _U(8) * vu, 8)
        em.op(0x160, "IADD", (17,), (16, 17), act)
        em.op(0x170, "ISETP.GE.AND", (), (16, 17), act)
        em.op(0x180, "SSY", (), (), act)
        em.op(0x190, "IADD", (13,), (12,), act)
        for j in range(int(trips.max(initial=0))):
            act = Active(trips > j)
            nb = _lane_gather(edges, start, j, trips)
            nbu = nb.astype(_U)
            em.op(0x1A0, "SHL", (18,), (16,), act)
            em.op(0x1B0, "SHR", (19,), (16,), act)
            em.op(0x1C0, "IADD.CC", (18,), (18,), act)
            em.op(0x1D0, "IADD.X", (19,), (19,), act)
            em.op(0x1E0, "LDG.E", (20,), (18,), act, _U(p_edge) + _U(4) * (start + j).astype(_U), 4)
            em.op(0x1F0, "IADD.CC", (22,), (20,), act)
            em.op(0x200, "IADD.X", (23,), (20,), act)
            em.op(0x210, "LDG.E.U8", (24,), (22,), act, _U(p_vis) + nbu, 1)
            em.op(0x220, "ISETP.NE.AND", (), (24,), act)
            new = act & ~visited[nb]
            em.op(0x230, "SHL", (26,), (20,), new)
            em.op(0x240, "SHR", (27,), (20,), new)
            em.op(0x250, "IADD.CC", (26,), (26,), new)
            em.op(0x260, "IADD.X", (27,), (27,), new)
            em.op(0x270, "STG.E", (), (26, 13), new, _U(p_cost) + _U(4) * nbu, 4)
            em.op(0x280, "IADD.CC", (28,), (20,), new)
            em.op(0x290, "IADD.X", (29,), (20,), new)
            em.op(0x2A0, "STG.E.U8", (), (28,), new, _U(p_upd) + nbu, 1)
            em.op(0x2B0, "IADD", (16,), (16,), act)
            em.op(0x2C0, "ISETP.LT.AND", (), (16, 17), act)
            cont = Active(trips > j + 1)
            em.op(0x2D0, "BRA", (), (), cont)
            em.op(0x2E0, "SYNC", (), (), act.minus(cont))
        em.op(end_pc, "EXIT", (), (), a_f)

    kt = build_kernel(
        g,
        _body,
        name="bfs_kernel(Node*, int*, bool*, bool*, bool*, int*, int)",
        kernel_id=1,
        nregs=30,
        shmem_bytes=0,
    )
    cmds: list = [
        Memcpy(p_node, 8 * n),
        Memcpy(p_edge, 4 * int(edges.size)),
        Memcpy(p_front, n),
        Memcpy(p_vis, n),
        Memcpy(p_cost, 4 * n),
        kt,
    ]
    return AppTrace(cmds, name="bfs")
