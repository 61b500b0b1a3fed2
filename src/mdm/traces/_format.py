"""Numba kernel that formats warps of a :class:`KernelTrace` as Accel-Sim text.

:func:`format_warps` writes the thread blocks of warps ``w0:w1`` (whole blocks) into
a byte buffer sized by :func:`bytes_bound`. The caller validates the arrays first
(address counts, opcode names); the kernel only formats.

Address section of a memory instruction (``mem_width > 0``), as the tracer writes it:
``mode`` 0 = auto (base and stride, address mode 1, when the active lanes are
contiguous with one constant stride that fits in 32 bits, else the list, mode 0),
1 = always the list, 2 = always base and deltas (mode 2) with ``active - 1`` deltas,
or ``active`` when ``delta_n`` (a trailing 0, as Accel-Sim's own reader expects).
"""

from __future__ import annotations

import numpy as np

from mdm._jit import inlined, njit

_BEGIN = np.frombuffer(b"\n#BEGIN_TB\n\nthread block = ", dtype=np.uint8).copy()
_END = np.frombuffer(b"\n#END_TB\n", dtype=np.uint8).copy()
_WARP = np.frombuffer(b"\nwarp = ", dtype=np.uint8).copy()
_INSTS = np.frombuffer(b"\ninsts = ", dtype=np.uint8).copy()
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8).copy()
_MODE1 = np.frombuffer(b" 1 0x", dtype=np.uint8).copy()
_MODE2 = np.frombuffer(b" 2 0x", dtype=np.uint8).copy()

#: Upper bound of the text of one instruction without addresses, and per address.
INST_BYTES = 256
ADDR_BYTES = 21
WARP_BYTES = 48
BLOCK_BYTES = 80


def bytes_bound(addr_counts: np.ndarray, warp_ptr: np.ndarray) -> np.ndarray:
    """Upper bound of the text bytes of each warp (block headers included)."""
    per_inst = INST_BYTES + ADDR_BYTES * addr_counts.astype(np.int64)
    cum = np.zeros(per_inst.shape[0] + 1, np.int64)
    np.cumsum(per_inst, out=cum[1:])
    return cum[warp_ptr[1:]] - cum[warp_ptr[:-1]] + WARP_BYTES + BLOCK_BYTES


@inlined
def _put(out: np.ndarray, p: int, src: np.ndarray) -> int:
    for i in range(src.shape[0]):
        out[p + i] = src[i]
    return p + src.shape[0]


@njit(cache=True)
def _put_udec(out: np.ndarray, p: int, v: np.uint64) -> int:
    tmp = np.empty(20, np.uint8)
    n = 0
    while True:
        tmp[n] = 48 + np.uint8(v % np.uint64(10))
        v //= np.uint64(10)
        n += 1
        if v == 0:
            break
    for i in range(n):
        out[p + i] = tmp[n - 1 - i]
    return p + n


@njit(cache=True)
def _put_dec(out: np.ndarray, p: int, v: np.int64) -> int:
    if v < 0:
        out[p] = 45
        return _put_udec(out, p + 1, np.uint64(0) - np.uint64(v))
    return _put_udec(out, p, np.uint64(v))


@njit(cache=True)
def _put_hex(out: np.ndarray, p: int, v: np.uint64, min_digits: int) -> int:
    n = 1
    t = v >> np.uint64(4)
    while t:
        n += 1
        t >>= np.uint64(4)
    if n < min_digits:
        n = min_digits
    for i in range(n):
        out[p + n - 1 - i] = _HEX[np.int64(v & np.uint64(15))]
        v >>= np.uint64(4)
    return p + n


@njit(cache=True)
def _put_reg(out: np.ndarray, p: int, r: int) -> int:
    out[p] = 32
    out[p + 1] = 82  # 'R'
    return _put_udec(out, p + 2, np.uint64(r))


@njit(cache=True)
def _put_regs(out: np.ndarray, p: int, regs: np.ndarray, i: int) -> int:
    """`` <count> R<a> R<b>...``: the registers ``>= 0`` of row ``i`` of ``regs``."""
    n = 0
    for k in range(regs.shape[1]):
        if regs[i, k] >= 0:
            n += 1
    out[p] = 32
    p = _put_udec(out, p + 1, np.uint64(n))
    for k in range(regs.shape[1]):
        if regs[i, k] >= 0:
            p = _put_reg(out, p, regs[i, k])
    return p


@njit(cache=True)
def format_warps(
    w0: int,
    w1: int,
    grid_x: int,
    grid_y: int,
    warp_ptr: np.ndarray,
    warp_block: np.ndarray,
    warp_id: np.ndarray,
    pc: np.ndarray,
    mask: np.ndarray,
    dst: np.ndarray,
    src: np.ndarray,
    opcode: np.ndarray,
    op_bytes: np.ndarray,
    op_len: np.ndarray,
    mem_width: np.ndarray,
    line: np.ndarray,
    addr_ptr: np.ndarray,
    addrs: np.ndarray,
    mode: int,
    delta_n: bool,
    immediate: bool,
    lineinfo: bool,
    out: np.ndarray,
) -> int:
    """Format warps ``w0:w1`` into ``out``; returns the number of bytes written."""
    p = 0
    w = w0
    while w < w1:
        b = warp_block[w]
        p = _put(out, p, _BEGIN)
        p = _put_udec(out, p, np.uint64(b % grid_x))
        out[p] = 44
        p = _put_udec(out, p + 1, np.uint64((b // grid_x) % grid_y))
        out[p] = 44
        p = _put_udec(out, p + 1, np.uint64(b // (grid_x * grid_y)))
        out[p] = 10
        p += 1
        while w < w1 and warp_block[w] == b:
            s = warp_ptr[w]
            e = warp_ptr[w + 1]
            p = _put(out, p, _WARP)
            p = _put_udec(out, p, np.uint64(warp_id[w]))
            p = _put(out, p, _INSTS)
            p = _put_udec(out, p, np.uint64(e - s))
            out[p] = 10
            p += 1
            for i in range(s, e):
                if lineinfo:
                    p = _put_dec(out, p, np.int64(line[i]))
                    out[p] = 32
                    p += 1
                p = _put_hex(out, p, np.uint64(pc[i]), 4)
                out[p] = 32
                p = _put_hex(out, p + 1, np.uint64(mask[i]), 8)
                p = _put_regs(out, p, dst, i)
                out[p] = 32
                p += 1
                o = opcode[i]
                for k in range(op_len[o]):
                    out[p + k] = op_bytes[o, k]
                p += op_len[o]
                p = _put_regs(out, p, src, i)
                out[p] = 32
                p = _put_udec(out, p + 1, np.uint64(mem_width[i]))
                if mem_width[i] > 0:
                    a0 = addr_ptr[i]
                    n = addr_ptr[i + 1] - a0
                    m = np.uint32(mask[i])
                    use = mode
                    stride = np.int64(0)
                    if mode == 0:
                        use = 1
                        if n >= 1:
                            low = m & (np.uint32(0) - m)
                            sh = m // low
                            if (sh & (sh + np.uint32(1))) == 0:
                                if n > 1:
                                    stride = np.int64(addrs[a0 + 1] - addrs[a0])
                                ok = -(2**31) <= stride < 2**31
                                for k in range(1, n):
                                    if np.int64(addrs[a0 + k] - addrs[a0 + k - 1]) != stride:
                                        ok = False
                                        break
                                if ok:
                                    use = 0
                    if use == 0:  # base, stride
                        p = _put(out, p, _MODE1)
                        p = _put_hex(out, p, np.uint64(addrs[a0]), 1)
                        out[p] = 32
                        p = _put_dec(out, p + 1, stride)
                    elif use == 1:  # list
                        out[p] = 32
                        out[p + 1] = 48
                        p += 2
                        for k in range(n):
                            out[p] = 32
                            out[p + 1] = 48
                            out[p + 2] = 120
                            p = _put_hex(out, p + 3, np.uint64(addrs[a0 + k]), 1)
                    else:  # base, deltas
                        p = _put(out, p, _MODE2)
                        p = _put_hex(out, p, np.uint64(addrs[a0]) if n > 0 else np.uint64(0), 1)
                        for k in range(1, n):
                            out[p] = 32
                            p = _put_dec(out, p + 1, np.int64(addrs[a0 + k] - addrs[a0 + k - 1]))
                        if delta_n and n > 0:
                            out[p] = 32
                            out[p + 1] = 48
                            p += 2
                if immediate:
                    out[p] = 32
                    out[p + 1] = 48
                    p += 2
                out[p] = 10
                p += 1
            w += 1
        p = _put(out, p, _END)
    return p
