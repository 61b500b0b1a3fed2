"""Dense, coalesced kernels: ``stencil2d`` (5-point Jacobi) and ``gemm_tiled`` (SGEMM).

SASS sequences follow the Pascal reference traces under
``../shared/reference/traces/sm61/{stencil2d,gemm_tiled}``; with the reference's
parameters the launch geometry and warp instruction counts are the same.
"""

from __future__ import annotations

import numpy as np

from mdm.traces.model import AppTrace, KernelTrace, Memcpy
from mdm.traces.workloads._emit import (
    Active,
    Emitter,
    Geometry,
    array_bases,
    build_kernel,
    check_param,
)

_U = np.uint64


def _stencil_kernel(g: Geometry, kid: int, w: int, h: int, src: int, dst: int) -> KernelTrace:
    """One Jacobi sweep ``out[y][x] = 0.25*(l+r+u+d) ... + c`` over the interior points."""

    def _body(g: Geometry, em: Emitter) -> None:
        act = g.all()
        em.op(0x00, "MOV", (1,), (), act)
        em.op(0x10, "S2R", (0,), (), act)
        em.op(0x20, "S2R", (2,), (), act)
        em.op(0x30, "S2R", (3,), (), act)
        em.op(0x40, "S2R", (4,), (), act)
        em.op(0x50, "XMAD.MRG", (0,), (0,), act)
        em.op(0x60, "XMAD", (0,), (0, 2), act)
        em.op(0x70, "XMAD.PSL.CBCC", (0,), (0, 0, 0), act)
        em.op(0x80, "XMAD.MRG", (3,), (3,), act)
        em.op(0x90, "XMAD", (3,), (3, 4), act)
        em.op(0xA0, "XMAD.PSL.CBCC", (3,), (3, 3, 3), act)
        em.op(0xB0, "IADD", (5,), (0,), act)
        em.op(0xC0, "ISETP.GE.AND", (), (5,), act)
        em.op(0xD0, "ISETP.GE.AND", (), (0,), act)
        em.op(0xE0, "IADD", (6,), (3,), act)
        em.op(0xF0, "ISETP.GT.AND", (), (6,), act)
        em.op(0x100, "ISETP.GE.AND", (), (3,), act)
        x = g.bx * g.block[0] + g.tx
        y = g.by * g.block[1] + g.ty
        inner = Active(g.valid & (x >= 1) & (x < w - 1) & (y >= 1) & (y < h - 1))
        em.op(0x110, "EXIT", (), (), act.minus(inner))
        act = inner
        idx = (y * w + x).astype(_U)
        at = _U(src) + _U(4) * idx
        em.op(0x120, "XMAD.MRG", (7,), (3,), act)
        em.op(0x130, "XMAD", (7,), (3, 0), act)
        em.op(0x140, "XMAD.PSL.CBCC", (7,), (3, 7, 7), act)
        em.op(0x150, "SHL", (8,), (7,), act)
        em.op(0x160, "SHR", (9,), (7,), act)
        em.op(0x170, "IADD.CC", (10,), (8,), act)
        em.op(0x180, "IADD.X", (11,), (9,), act)
        em.op(0x190, "LDG.E", (12,), (10,), act, at, 4)
        em.op(0x1A0, "LDG.E", (13,), (10,), act, at - _U(4), 4)
        em.op(0x1B0, "LDG.E", (14,), (10,), act, at + _U(4), 4)
        em.op(0x1C0, "IADD", (16,), (10,), act)
        em.op(0x1D0, "IADD", (17,), (11,), act)
        em.op(0x1E0, "LDG.E", (15,), (16,), act, at - _U(4 * w), 4)
        em.op(0x1F0, "IADD", (18,), (10,), act)
        em.op(0x200, "IADD", (19,), (11,), act)
        em.op(0x210, "LDG.E", (20,), (18,), act, at + _U(4 * w), 4)
        em.op(0x220, "FADD", (21,), (13, 14), act)
        em.op(0x230, "FADD", (21,), (21, 15), act)
        em.op(0x240, "FADD", (21,), (21, 20), act)
        em.op(0x250, "FMUL", (22,), (12,), act)
        em.op(0x260, "FFMA", (22,), (21, 22), act)
        em.op(0x270, "IADD.CC", (24,), (8,), act)
        em.op(0x280, "IADD.X", (25,), (9,), act)
        em.op(0x290, "STG.E", (), (24, 22), act, _U(dst) + _U(4) * idx, 4)
        em.op(0x2A0, "EXIT", (), (), act)

    return build_kernel(
        g,
        _body,
        name="jacobi5pt_kernel(float const*, float*, int, int)",
        kernel_id=kid,
        nregs=26,
        shmem_bytes=0,
    )


def stencil2d(seed: int = 0, *, W: int = 512, H: int = 224, sweeps: int = 2) -> AppTrace:  # noqa: N803
    """5-point Jacobi on a ``W x H`` float grid, 32x8 blocks, one kernel per sweep.

    Sweeps ping-pong between two arrays. Lanes on the border (and outside the grid
    when ``W``/``H`` are not multiples of the block) exit after the bounds checks.
    ``seed`` is unused (no randomness).
    """
    del seed
    check_param("W", W, 3)
    check_param("H", H, 3)
    check_param("sweeps", sweeps, 1, 1000)
    g = Geometry((-(-W // 32), -(-H // 8), 1), (32, 8, 1))
    a, b = array_bases([4 * W * H, 4 * W * H])
    cmds: list[KernelTrace | Memcpy] = [Memcpy(a, 4 * W * H)]
    for s in range(sweeps):
        src, dst = (a, b) if s % 2 == 0 else (b, a)
        cmds.append(_stencil_kernel(g, s + 1, W, H, src, dst))
    return AppTrace(cmds, name="stencil2d")


def _check_tiled(sizes: dict[str, int], tile: int) -> None:
    """Each size parameter at least ``tile`` and a multiple of it, else a ValueError
    naming it."""
    for nm, v in sizes.items():
        check_param(nm, v, tile)
        if v % tile:
            raise ValueError(f"parameter {nm}={v} must be a multiple of the tile size {tile}")


def gemm_tiled(seed: int = 0, *, M: int = 224, N: int = 512, K: int = 32) -> AppTrace:  # noqa: N803
    """``C = A B`` (row-major floats) with 16x16 shared-memory tiles.

    Per tile: LDG of A and B -> STS -> BAR.SYNC -> 16 k-steps as 4 x (LDS.U.128 of an A
    row quad, 4 LDS.U.32 of B, 4 FFMA) -> BAR.SYNC. ``M``, ``N``, ``K`` must be
    multiples of 16. ``seed`` is unused.
    """
    del seed
    _check_tiled({"M": M, "N": N, "K": K}, 16)
    g = Geometry((N // 16, M // 16, 1), (16, 16, 1))
    pa, pb, pc_ = array_bases([4 * M * K, 4 * K * N, 4 * M * N])

    def _body(g: Geometry, em: Emitter) -> None:
        act = g.all()
        row = (g.by * 16 + g.ty).astype(_U)
        col = (g.bx * 16 + g.tx).astype(_U)
        tx, ty = g.tx.astype(_U), g.ty.astype(_U)
        em.op(0x00, "MOV", (1,), (), act)
        em.op(0x10, "S2R", (0,), (), act)
        em.op(0x20, "S2R", (2,), (), act)
        em.op(0x30, "S2R", (3,), (), act)
        em.op(0x40, "S2R", (4,), (), act)
        em.op(0x50, "XMAD.MRG", (5,), (4,), act)
        em.op(0x60, "XMAD", (5,), (4, 2), act)
        em.op(0x70, "XMAD.PSL.CBCC", (5,), (4, 5, 5), act)
        em.op(0x80, "XMAD.MRG", (6,), (3,), act)
        em.op(0x90, "XMAD", (6,), (3, 0), act)
        em.op(0xA0, "XMAD.PSL.CBCC", (6,), (3, 6, 6), act)
        em.op(0xB0, "XMAD.MRG", (7,), (5,), act)
        em.op(0xC0, "XMAD", (7,), (5,), act)
        em.op(0xD0, "XMAD.PSL.CBCC", (7,), (5, 7, 7), act)
        em.op(0xE0, "IADD", (7,), (7, 0), act)
        em.op(0xF0, "XMAD.MRG", (8,), (2,), act)
        em.op(0x100, "XMAD", (8,), (2, 6), act)
        em.op(0x110, "XMAD.PSL.CBCC", (8,), (2, 8, 8), act)
        em.op(0x120, "SHL", (9,), (2,), act)
        em.op(0x130, "IADD", (9,), (9, 0), act)
        em.op(0x140, "SHL", (10,), (0,), act)
        em.op(0x150, "MOV", (11,), (), act)
        sh = _U(4) * (ty * _U(16) + tx)
        tiles = K // 16
        for t in range(tiles):
            k0 = _U(16 * t)
            em.op(0x160, "SHL", (12,), (7,), act)
            em.op(0x170, "SHR", (13,), (7,), act)
            em.op(0x180, "IADD.CC", (12,), (12,), act)
            em.op(0x190, "IADD.X", (13,), (13,), act)
            em.op(0x1A0, "LDG.E", (14,), (12,), act, _U(pa) + _U(4) * (row * _U(K) + k0 + tx), 4)
            em.op(0x1B0, "SHL", (16,), (8,), act)
            em.op(0x1C0, "SHR", (17,), (8,), act)
            em.op(0x1D0, "IADD.CC", (16,), (16,), act)
            em.op(0x1E0, "IADD.X", (17,), (17,), act)
            em.op(0x1F0, "LDG.E", (15,), (16,), act, _U(pb) + _U(4) * ((k0 + ty) * _U(N) + col), 4)
            em.op(0x200, "STS", (), (9, 14), act, sh, 4)
            em.op(0x210, "STS", (), (9, 15), act, _U(0x400) + sh, 4)
            em.op(0x220, "BAR.SYNC", (), (), act)
            pc = 0x230
            for q in range(4):
                em.op(pc, "LDS.U.128", (18,), (9,), act, _U(4) * (ty * _U(16) + _U(4 * q)), 16)
                for r in range(4):
                    b_at = _U(0x400) + _U(4) * (_U((4 * q + r) * 16) + tx)
                    em.op(pc + 0x10 * (r + 1), "LDS.U.32", (22 + r,), (10,), act, b_at, 4)
                for r in range(4):
                    em.op(pc + 0x50 + 0x10 * r, "FFMA", (11,), (18 + r, 22 + r, 11), act)
                pc += 0x90
            em.op(0x470, "IADD", (7,), (7,), act)
            em.op(0x480, "IADD", (8,), (8,), act)
            em.op(0x490, "ISETP.LT.AND", (), (7,), act)
            em.op(0x4A0, "BAR.SYNC", (), (), act)
            if t + 1 < tiles:
                em.op(0x4B0, "BRA", (), (), act)
        em.op(0x4C0, "XMAD.MRG", (26,), (5,), act)
        em.op(0x4D0, "XMAD", (26,), (5, 6), act)
        em.op(0x4E0, "XMAD.PSL.CBCC", (26,), (5, 26, 26), act)
        em.op(0x4F0, "SHL", (28,), (26,), act)
        em.op(0x500, "SHR", (29,), (26,), act)
        em.op(0x510, "IADD.CC", (28,), (28,), act)
        em.op(0x520, "IADD.X", (29,), (29,), act)
        em.op(0x530, "STG.E", (), (28, 11), act, _U(pc_) + _U(4) * (row * _U(N) + col), 4)
        em.op(0x540, "EXIT", (), (), act)

    kt = build_kernel(
        g,
        _body,
        name="sgemm_tiled16(float const*, float const*, float*, int, int, int)",
        kernel_id=1,
        nregs=32,
        shmem_bytes=2048,
    )
    return AppTrace([Memcpy(pa, 4 * M * K), Memcpy(pb, 4 * K * N), kt], name="gemm_tiled")


def transpose(seed: int = 0, *, W: int = 1024, H: int = 1024, pad: int = 0) -> AppTrace:  # noqa: N803
    """``out = in^T`` (row-major floats) through a 32x32 shared-memory tile.

    The tiled transpose of NVIDIA's CUDA samples: 32 x 8 threads per block, each thread
    moving 4 elements; per element LDG (coalesced row) -> STS ``tile[ty + j][tx]``;
    BAR.SYNC; per element LDS ``tile[tx][ty + j]`` (a column of the tile) -> STG
    (coalesced row). With ``pad = 0`` the tile's rows are 32 words apart, so a column
    read puts all 32 lanes in one bank (32-way bank conflicts); ``pad = 1`` (rows of 33
    words) spreads them over the 32 banks. ``W`` and ``H`` must be multiples of 32.
    ``seed`` is unused.
    """
    del seed
    _check_tiled({"W": W, "H": H}, 32)
    check_param("pad", pad, 0, 1)
    pad = int(pad)
    g = Geometry((W // 32, H // 32, 1), (32, 8, 1))
    pin, pout = array_bases([4 * W * H, 4 * W * H])
    row_words = _U(32 + pad)

    def _body(g: Geometry, em: Emitter) -> None:
        act = g.all()
        tx, ty = g.tx.astype(_U), g.ty.astype(_U)
        bx, by = g.bx.astype(_U), g.by.astype(_U)
        em.op(0x00, "MOV", (1,), (), act)
        em.op(0x10, "S2R", (0,), (), act)  # tid.x
        em.op(0x20, "S2R", (2,), (), act)  # tid.y
        em.op(0x30, "S2R", (3,), (), act)  # ctaid.x
        em.op(0x40, "S2R", (4,), (), act)  # ctaid.y
        em.op(0x50, "ISCADD", (5,), (3, 0), act)  # x = 32 bx + tx
        em.op(0x60, "ISCADD", (6,), (4, 2), act)  # y = 32 by + ty
        em.op(0x70, "XMAD", (7,), (6, 5), act)  # y * W + x
        em.op(0x80, "ISCADD", (8,), (2, 0), act)  # tile[ty][tx] offset
        em.op(0x90, "ISCADD", (9,), (0, 2), act)  # tile[tx][ty] offset
        x, y = bx * _U(32) + tx, by * _U(32) + ty
        for j in range(4):
            r = _U(8 * j)
            pc = 0xA0 + 0x40 * j
            em.op(pc, "IADD", (10,), (7,), act)
            em.op(pc + 0x10, "ISCADD", (12,), (10,), act)
            em.op(
                pc + 0x20,
                "LDG.E",
                (14 + j,),
                (12,),
                act,
                _U(pin) + _U(4) * ((y + r) * _U(W) + x),
                4,
            )
            em.op(pc + 0x30, "STS", (), (8, 14 + j), act, _U(4) * ((ty + r) * row_words + tx), 4)
        em.op(0x1A0, "BAR.SYNC", (), (), act)
        xo, yo = by * _U(32) + tx, bx * _U(32) + ty  # the block's transposed place
        em.op(0x1B0, "ISCADD", (5,), (4, 0), act)
        em.op(0x1C0, "ISCADD", (6,), (3, 2), act)
        em.op(0x1D0, "XMAD", (7,), (6, 5), act)
        for j in range(4):
            r = _U(8 * j)
            pc = 0x1E0 + 0x40 * j
            em.op(pc, "LDS.U.32", (18 + j,), (9,), act, _U(4) * (tx * row_words + ty + r), 4)
            em.op(pc + 0x10, "IADD", (10,), (7,), act)
            em.op(pc + 0x20, "ISCADD", (12,), (10,), act)
            em.op(
                pc + 0x30,
                "STG.E",
                (),
                (12, 18 + j),
                act,
                _U(pout) + _U(4) * ((yo + r) * _U(H) + xo),
                4,
            )
        em.op(0x2E0, "EXIT", (), (), act)

    kt = build_kernel(
        g,
        _body,
        name=f"transpose_tile32{'_padded' if pad else ''}(float*, float const*, int, int)",
        kernel_id=1,
        nregs=24,
        shmem_bytes=4 * 32 * (32 + pad),
    )
    return AppTrace([Memcpy(pin, 4 * W * H), kt], name="transpose")
