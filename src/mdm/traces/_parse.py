"""Numba kernel that parses the body of an Accel-Sim ``.traceg`` file.

The body (everything after the ``-key = value`` header) is handed over in chunks
that end on a line boundary. :func:`parse_chunk` walks the lines of one chunk,
fills preallocated output arrays and keeps its position in a small ``state``
array, so a kernel trace of any size is parsed in bounded text memory. It stops
with a status code when an output array is full or a new opcode string is met
(Python grows the arrays / interns the opcode and calls again from the same line),
or with an error code and the byte offset of the faulty line.

Address decompression follows Accel-Sim's ``trace_parser.cc``:

* mode 0 (``list_all``): one hex address per active lane, lanes in increasing order;
* mode 1 (``base_stride``): hex base and decimal stride; the ``k``-th active lane
  gets ``base + k*stride`` (identical to upstream for contiguous active lanes, the
  only case the tracer emits; upstream would give 0 to lanes after a gap);
* mode 2 (``base_delta``): hex base then decimal deltas, each active lane after the
  first at the previous lane's address plus the next delta. The tracer writes
  ``active-1`` deltas while upstream reads ``active``; both are accepted (only the
  first ``active-1`` are used, so the addresses agree either way).

The trailing immediate is optional (tracer versions 3-5 differ); the first line that
decides it fixes it for the whole file, and a later line that disagrees is an error.
"""

from __future__ import annotations

import numpy as np

from mdm._jit import inlined, njit

# state slots
S_LINES = 0  # lines of the body fully processed
S_IN_TB = 1
S_TB_SEEN = 2
S_BLOCK = 3  # linear index of the current block
S_WARP_OPEN = 4
S_REMAIN = 5  # instructions still expected for the open warp; -1 before "insts ="
S_NINST = 6
S_NADDR = 7
S_NWARP = 8
S_HAS_IMM = 9  # -1 undecided, 0 no immediate, 1 immediate
S_NTB = 10
S_WARPS_IN_TB = 11
S_WARPMASK = 12
S_DECL = 13  # declared "insts = N" of the open warp
S_ARG = 14  # extra number for error messages
N_STATE = 16

OK = 0
GROW_INST = 1
GROW_ADDR = 2
GROW_WARP = 3
NEW_OPCODE = 4

#: error code -> what was expected (the Python side adds file and line).
ERRORS = {
    10: "expected a decimal source line number first (-enable lineinfo = 1)",
    11: "expected a hex PC (at most 32 bits)",
    12: "expected a hex active mask (at most 32 bits)",
    13: "expected the number of destination registers (0..4)",
    14: "expected a register operand R<n> (n < 32768)",
    15: "expected an opcode (letters, digits, '.', '_', at most 64 characters)",
    16: "expected the number of source registers (0..8)",
    17: "expected the memory width in bytes (0..255)",
    18: "expected address mode 0, 1 or 2 after a non-zero memory width",
    19: "expected one hex address per active lane (address mode 0)",
    20: "expected a hex base address and a decimal stride (address mode 1)",
    21: "expected a hex base address followed by decimal deltas (address mode 2)",
    22: "wrong number of fields at the end of the instruction line: expected at most one "
    "immediate after the addresses",
    23: "trailing immediate present on some instruction lines and absent on others",
    24: "expected an integer immediate as the last field",
    30: "#BEGIN_TB before the #END_TB of the previous thread block",
    31: "#END_TB without a matching #BEGIN_TB",
    32: "line outside a #BEGIN_TB ... #END_TB thread block",
    33: "expected 'thread block = x,y,z' inside the grid",
    34: "second 'thread block = ...' line in one thread block",
    35: "thread block listed twice in the trace",
    36: "expected 'thread block = x,y,z' before 'warp = N'",
    37: "expected 'warp = N' with N below the warps per block",
    38: "warp listed twice in one thread block",
    39: "expected 'insts = N'",
    40: "expected 'insts = N' after 'warp = ...' and before the instructions",
    41: "second 'insts = N' line for one warp",
    42: "fewer instruction lines than the warp's 'insts = N'",
    43: "more instruction lines than the warp's 'insts = N'",
    44: "instruction line before 'warp = N' / 'insts = N'",
    45: "thread block does not hold the warps its block dim requires",
    46: "header line ('-key = value') inside the trace body",
    47: "more destination/source registers than the trace model holds",
    48: "Hopper TMA/bulk-copy address lists (UTMA*/UBLK* with a memory width) are not "
    "supported; expected mem_width 0 for this opcode",
}

_KW_THREAD = np.frombuffer(b"thread", dtype=np.uint8).copy()
_KW_BLOCK = np.frombuffer(b"block", dtype=np.uint8).copy()
_KW_WARP = np.frombuffer(b"warp", dtype=np.uint8).copy()
_KW_INSTS = np.frombuffer(b"insts", dtype=np.uint8).copy()
_KW_BEGIN = np.frombuffer(b"#BEGIN_TB", dtype=np.uint8).copy()
_KW_END = np.frombuffer(b"#END_TB", dtype=np.uint8).copy()

OPC_MAXLEN = 64


@inlined
def _is_ws(b: int) -> bool:
    return b == 32 or b == 9 or b == 13


@inlined
def _skip_ws(buf: np.ndarray, p: int, e: int) -> int:
    while p < e and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
        p += 1
    return p


@inlined
def _tok_end(buf: np.ndarray, p: int, e: int) -> int:
    while p < e and not (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
        p += 1
    return p


@njit(cache=True)
def _parse_hex(buf: np.ndarray, s: int, e: int) -> tuple[bool, np.uint64]:
    if e - s >= 2 and buf[s] == 48 and (buf[s + 1] == 120 or buf[s + 1] == 88):
        s += 2
    if s >= e or e - s > 16:
        return False, np.uint64(0)
    v = np.uint64(0)
    for i in range(s, e):
        c = buf[i]
        if 48 <= c <= 57:
            d = c - 48
        elif 97 <= c <= 102:
            d = c - 87
        elif 65 <= c <= 70:
            d = c - 55
        else:
            return False, np.uint64(0)
        v = (v << np.uint64(4)) | np.uint64(d)
    return True, v


@njit(cache=True)
def _parse_dec(buf: np.ndarray, s: int, e: int) -> tuple[bool, np.int64]:
    """Signed decimal of at most 19 digits, wrapped to int64 (deltas are mod 2**64)."""
    neg = False
    if s < e and (buf[s] == 45 or buf[s] == 43):
        neg = buf[s] == 45
        s += 1
    if s >= e or e - s > 19:
        return False, np.int64(0)
    v = np.uint64(0)
    for i in range(s, e):
        c = buf[i]
        if c < 48 or c > 57:
            return False, np.int64(0)
        v = v * np.uint64(10) + np.uint64(c - 48)
    if neg:
        v = np.uint64(0) - v
    return True, np.int64(v)


@njit(cache=True)
def _parse_int_any(buf: np.ndarray, s: int, e: int) -> bool:
    """An immediate: signed decimal or 0x-prefixed hex."""
    if e - s >= 3 and buf[s] == 48 and (buf[s + 1] == 120 or buf[s + 1] == 88):
        ok, _ = _parse_hex(buf, s, e)
        return ok
    ok2, _ = _parse_dec(buf, s, e)
    return ok2


@njit(cache=True)
def _match(buf: np.ndarray, p: int, e: int, kw: np.ndarray) -> bool:
    n = kw.shape[0]
    if e - p < n:
        return False
    for i in range(n):
        if buf[p + i] != kw[i]:
            return False
    return True


@njit(cache=True)
def hash_bytes(buf: np.ndarray, s: int, e: int) -> np.uint64:
    """FNV-1a hash of ``buf[s:e]`` (opcode interning)."""
    h = np.uint64(14695981039346656037)
    for i in range(s, e):
        h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
    return h


@njit(cache=True)
def table_insert(
    tab_id: np.ndarray,
    tab_hash: np.ndarray,
    op_bytes: np.ndarray,
    op_len: np.ndarray,
    buf: np.ndarray,
    s: int,
    e: int,
    new_id: int,
) -> None:
    """Insert opcode ``buf[s:e]`` with id ``new_id`` into the open-addressing table."""
    h = hash_bytes(buf, s, e)
    m = tab_id.shape[0] - 1
    slot = np.int64(h & np.uint64(m))
    while tab_id[slot] >= 0:
        slot = (slot + 1) & m
    tab_id[slot] = new_id
    tab_hash[slot] = h
    for i in range(e - s):
        op_bytes[new_id, i] = buf[s + i]
    op_len[new_id] = e - s


@njit(cache=True)
def _lookup(
    tab_id: np.ndarray,
    tab_hash: np.ndarray,
    op_bytes: np.ndarray,
    op_len: np.ndarray,
    buf: np.ndarray,
    s: int,
    e: int,
) -> int:
    h = hash_bytes(buf, s, e)
    m = tab_id.shape[0] - 1
    slot = np.int64(h & np.uint64(m))
    n = e - s
    while True:
        k = tab_id[slot]
        if k < 0:
            return -1
        if tab_hash[slot] == h and op_len[k] == n:
            same = True
            for i in range(n):
                if op_bytes[k, i] != buf[s + i]:
                    same = False
                    break
            if same:
                return k
        slot = (slot + 1) & m


@njit(cache=True)
def _parse_reg(buf: np.ndarray, s: int, e: int) -> int:
    if e - s < 2 or buf[s] != 82:  # 'R'
        return -1
    ok, v = _parse_dec(buf, s + 1, e)
    if not ok or v < 0 or v > 32767 or buf[s + 1] == 45 or buf[s + 1] == 43:
        return -1
    return int(v)


@njit(cache=True)
def parse_chunk(
    buf: np.ndarray,
    start: int,
    state: np.ndarray,
    lineinfo: int,
    grid_x: int,
    grid_y: int,
    grid_z: int,
    warps_per_block: int,
    block_seen: np.ndarray,
    tab_id: np.ndarray,
    tab_hash: np.ndarray,
    op_bytes: np.ndarray,
    op_len: np.ndarray,
    op_reject: np.ndarray,
    pc: np.ndarray,
    opcode: np.ndarray,
    mask: np.ndarray,
    dst: np.ndarray,
    src: np.ndarray,
    mem_width: np.ndarray,
    line: np.ndarray,
    addr_ptr: np.ndarray,
    addrs: np.ndarray,
    warp_start: np.ndarray,
    warp_block: np.ndarray,
    warp_id: np.ndarray,
) -> tuple[int, int, int, int]:
    """Parse the complete lines of ``buf[start:]``; returns ``(status, offset, a, b)``.

    ``offset`` is where to resume (status < 10) or the start of the faulty line
    (error). For ``NEW_OPCODE``, ``buf[a:b]`` is the opcode to intern. Opcodes whose
    ``op_reject`` flag is set may not carry addresses (their format is not supported).
    """
    n = buf.shape[0]
    p = start
    cap_inst = pc.shape[0]
    cap_addr = addrs.shape[0]
    cap_warp = warp_start.shape[0]
    max_dst = dst.shape[1]
    max_src = src.shape[1]
    while p < n:
        ls = p
        e = p
        while e < n and buf[e] != 10:
            e += 1
        nxt = e + 1
        q = _skip_ws(buf, p, e)
        if q == e:
            state[S_LINES] += 1
            p = nxt
            continue
        c = buf[q]
        if c == 35:  # '#'
            if _match(buf, q, e, _KW_BEGIN) and _skip_ws(buf, q + 9, e) == e:
                if state[S_IN_TB] != 0:
                    return 30, ls, 0, 0
                state[S_IN_TB] = 1
                state[S_TB_SEEN] = 0
                state[S_WARP_OPEN] = 0
                state[S_WARPS_IN_TB] = 0
                state[S_WARPMASK] = 0
            elif _match(buf, q, e, _KW_END) and _skip_ws(buf, q + 7, e) == e:
                if state[S_IN_TB] == 0:
                    return 31, ls, 0, 0
                if state[S_WARP_OPEN] != 0:
                    if state[S_REMAIN] < 0:
                        return 40, ls, 0, 0
                    if state[S_REMAIN] > 0:
                        return 42, ls, 0, 0
                if state[S_WARPS_IN_TB] != warps_per_block:
                    return 45, ls, 0, 0
                state[S_IN_TB] = 0
                state[S_TB_SEEN] = 0
                state[S_WARP_OPEN] = 0
                state[S_NTB] += 1
            # any other '#' line is a comment (e.g. "#traces format = ...")
            state[S_LINES] += 1
            p = nxt
            continue
        if c == 45 and not (lineinfo and q + 1 < e and 48 <= buf[q + 1] <= 57):
            return 46, ls, 0, 0  # a '-' line, unless a negative source line (-1: unknown)
        if c == 116:  # 't': thread block = x,y,z
            if state[S_IN_TB] == 0:
                return 32, ls, 0, 0
            if not _match(buf, q, e, _KW_THREAD):
                return 33, ls, 0, 0
            r = _skip_ws(buf, q + 6, e)
            if not _match(buf, r, e, _KW_BLOCK):
                return 33, ls, 0, 0
            r = _skip_ws(buf, r + 5, e)
            if r >= e or buf[r] != 61:
                return 33, ls, 0, 0
            r = _skip_ws(buf, r + 1, e)
            coords = np.zeros(3, dtype=np.int64)
            for k in range(3):
                t = r
                while t < e and buf[t] != 44 and not _is_ws(buf[t]):
                    t += 1
                ok, v = _parse_dec(buf, r, t)
                if not ok:
                    return 33, ls, 0, 0
                coords[k] = v
                r = _skip_ws(buf, t, e)
                if k < 2:
                    if r >= e or buf[r] != 44:
                        return 33, ls, 0, 0
                    r = _skip_ws(buf, r + 1, e)
            if r != e:
                return 33, ls, 0, 0
            bx, by, bz = coords[0], coords[1], coords[2]
            if bx < 0 or by < 0 or bz < 0 or bx >= grid_x or by >= grid_y or bz >= grid_z:
                return 33, ls, 0, 0
            if state[S_TB_SEEN] != 0:
                return 34, ls, 0, 0
            lin = bx + by * grid_x + bz * grid_x * grid_y
            if block_seen[lin] != 0:
                return 35, ls, 0, 0
            block_seen[lin] = 1
            state[S_TB_SEEN] = 1
            state[S_BLOCK] = lin
            state[S_LINES] += 1
            p = nxt
            continue
        if c == 119:  # 'w': warp = N
            if state[S_IN_TB] == 0:
                return 32, ls, 0, 0
            if not _match(buf, q, e, _KW_WARP):
                return 37, ls, 0, 0
            r = _skip_ws(buf, q + 4, e)
            if r >= e or buf[r] != 61:
                return 37, ls, 0, 0
            r = _skip_ws(buf, r + 1, e)
            t = _tok_end(buf, r, e)
            ok, v = _parse_dec(buf, r, t)
            if not ok or _skip_ws(buf, t, e) != e or v < 0 or v >= warps_per_block:
                return 37, ls, 0, 0
            if state[S_TB_SEEN] == 0:
                return 36, ls, 0, 0
            if state[S_WARP_OPEN] != 0:
                if state[S_REMAIN] < 0:
                    return 40, ls, 0, 0
                if state[S_REMAIN] > 0:
                    return 42, ls, 0, 0
            bit = np.int64(1) << np.int64(v)
            if state[S_WARPMASK] & bit:
                return 38, ls, 0, 0
            nw = state[S_NWARP]
            if nw >= cap_warp:
                return GROW_WARP, ls, 0, 0
            warp_start[nw] = state[S_NINST]
            warp_block[nw] = state[S_BLOCK]
            warp_id[nw] = v
            state[S_NWARP] = nw + 1
            state[S_WARPMASK] |= bit
            state[S_WARPS_IN_TB] += 1
            state[S_WARP_OPEN] = 1
            state[S_REMAIN] = -1
            state[S_LINES] += 1
            p = nxt
            continue
        if c == 105:  # 'i': insts = N
            if state[S_IN_TB] == 0:
                return 32, ls, 0, 0
            if not _match(buf, q, e, _KW_INSTS):
                return 39, ls, 0, 0
            r = _skip_ws(buf, q + 5, e)
            if r >= e or buf[r] != 61:
                return 39, ls, 0, 0
            r = _skip_ws(buf, r + 1, e)
            t = _tok_end(buf, r, e)
            ok, v = _parse_dec(buf, r, t)
            if not ok or _skip_ws(buf, t, e) != e or v < 0:
                return 39, ls, 0, 0
            if state[S_WARP_OPEN] == 0:
                return 40, ls, 0, 0
            if state[S_REMAIN] >= 0:
                return 41, ls, 0, 0
            state[S_REMAIN] = v
            state[S_DECL] = v
            state[S_LINES] += 1
            p = nxt
            continue
        # ---- instruction line -------------------------------------------
        if state[S_IN_TB] == 0:
            return 32, ls, 0, 0
        if state[S_WARP_OPEN] == 0 or state[S_REMAIN] < 0:
            return 44, ls, 0, 0
        if state[S_REMAIN] == 0:
            return 43, ls, 0, 0
        i = state[S_NINST]
        if i >= cap_inst:
            return GROW_INST, ls, 0, 0
        a0 = state[S_NADDR]
        if a0 + 32 > cap_addr:
            return GROW_ADDR, ls, 0, 0
        r = q
        lineno = np.int64(-1)
        if lineinfo:
            t = _tok_end(buf, r, e)
            ok, lineno = _parse_dec(buf, r, t)
            if not ok or lineno < -1 or lineno > 2147483647:
                return 10, ls, 0, 0
            r = _skip_ws(buf, t, e)
        t = _tok_end(buf, r, e)
        ok, v_pc = _parse_hex(buf, r, t)
        if not ok or v_pc > np.uint64(0xFFFFFFFF):
            return 11, ls, 0, 0
        r = _skip_ws(buf, t, e)
        t = _tok_end(buf, r, e)
        ok, v_mask = _parse_hex(buf, r, t)
        if not ok or v_mask > np.uint64(0xFFFFFFFF):
            return 12, ls, 0, 0
        r = _skip_ws(buf, t, e)
        t = _tok_end(buf, r, e)
        ok, ndst = _parse_dec(buf, r, t)
        if not ok or ndst < 0 or ndst > 4:
            return 13, ls, 0, 0
        if ndst > max_dst:
            return 47, ls, 0, 0
        r = _skip_ws(buf, t, e)
        for k in range(max_dst):
            dst[i, k] = -1
        for k in range(ndst):
            t = _tok_end(buf, r, e)
            reg = _parse_reg(buf, r, t)
            if reg < 0:
                return 14, ls, 0, 0
            dst[i, k] = reg
            r = _skip_ws(buf, t, e)
        # opcode
        t = _tok_end(buf, r, e)
        if t == r or t - r > OPC_MAXLEN:
            return 15, ls, 0, 0
        c0 = buf[r]
        if not ((65 <= c0 <= 90) or (97 <= c0 <= 122)):
            return 15, ls, 0, 0
        oid = _lookup(tab_id, tab_hash, op_bytes, op_len, buf, r, t)
        if oid < 0:
            return NEW_OPCODE, ls, r, t
        r = _skip_ws(buf, t, e)
        t = _tok_end(buf, r, e)
        ok, nsrc = _parse_dec(buf, r, t)
        if not ok or nsrc < 0 or nsrc > 8:
            return 16, ls, 0, 0
        if nsrc > max_src:
            return 47, ls, 0, 0
        r = _skip_ws(buf, t, e)
        for k in range(max_src):
            src[i, k] = -1
        for k in range(nsrc):
            t = _tok_end(buf, r, e)
            reg = _parse_reg(buf, r, t)
            if reg < 0:
                return 14, ls, 0, 0
            src[i, k] = reg
            r = _skip_ws(buf, t, e)
        t = _tok_end(buf, r, e)
        ok, width = _parse_dec(buf, r, t)
        if not ok or width < 0 or width > 255:
            return 17, ls, 0, 0
        r = _skip_ws(buf, t, e)
        nact = 0
        mm = np.uint32(v_mask)
        while mm:
            mm &= mm - np.uint32(1)
            nact += 1
        naddr = 0
        # number of trailing fields (immediate) and whether it is decided
        trailing = 0
        if width > 0:
            if op_reject[oid]:
                return 48, ls, 0, 0
            t = _tok_end(buf, r, e)
            ok, mode = _parse_dec(buf, r, t)
            if not ok or mode < 0 or mode > 2:
                return 18, ls, 0, 0
            r = _skip_ws(buf, t, e)
            if mode == 0:
                for k in range(nact):
                    t = _tok_end(buf, r, e)
                    ok, av = _parse_hex(buf, r, t)
                    if not ok:
                        return 19, ls, 0, 0
                    addrs[a0 + k] = av
                    r = _skip_ws(buf, t, e)
                naddr = nact
            elif mode == 1:
                t = _tok_end(buf, r, e)
                ok, base = _parse_hex(buf, r, t)
                if not ok:
                    return 20, ls, 0, 0
                r = _skip_ws(buf, t, e)
                t = _tok_end(buf, r, e)
                ok, stride = _parse_dec(buf, r, t)
                if not ok:
                    return 20, ls, 0, 0
                r = _skip_ws(buf, t, e)
                for k in range(nact):
                    addrs[a0 + k] = base + np.uint64(k) * np.uint64(stride)
                naddr = nact
            else:
                t = _tok_end(buf, r, e)
                ok, base = _parse_hex(buf, r, t)
                if not ok:
                    return 21, ls, 0, 0
                r = _skip_ws(buf, t, e)
                # count and check the remaining fields: deltas (+ immediate)
                ntok = 0
                rr = r
                while rr < e:
                    tt = _tok_end(buf, rr, e)
                    ok, dv = _parse_dec(buf, rr, tt)
                    if not ok:
                        return 21, ls, 0, 0
                    ntok += 1
                    rr = _skip_ws(buf, tt, e)
                dmin = nact - 1 if nact > 0 else 0
                dmax = nact
                if ntok < dmin or ntok > dmax + 1:
                    return 21, ls, 0, 0
                has_imm = state[S_HAS_IMM]
                if has_imm >= 0:
                    if ntok - has_imm < dmin or ntok - has_imm > dmax:
                        return 23, ls, 0, 0
                elif ntok == dmin:
                    state[S_HAS_IMM] = 0
                elif ntok == dmax + 1:
                    state[S_HAS_IMM] = 1
                if nact > 0:
                    addrs[a0] = base
                    cur = base
                    for k in range(1, nact):
                        t = _tok_end(buf, r, e)
                        ok, dv = _parse_dec(buf, r, t)
                        cur = cur + np.uint64(dv)
                        addrs[a0 + k] = cur
                        r = _skip_ws(buf, t, e)
                naddr = nact
                r = e  # remaining fields already checked
                trailing = -1
        if trailing == 0:
            # at most one immediate may follow
            if r < e:
                t = _tok_end(buf, r, e)
                if not _parse_int_any(buf, r, t):
                    return 24, ls, 0, 0
                r = _skip_ws(buf, t, e)
                if r != e:
                    return 22, ls, 0, 0
                trailing = 1
            has_imm = state[S_HAS_IMM]
            if has_imm >= 0 and has_imm != trailing:
                return 23, ls, 0, 0
            state[S_HAS_IMM] = trailing
        pc[i] = np.uint32(v_pc)
        opcode[i] = oid
        mask[i] = np.uint32(v_mask)
        mem_width[i] = width
        line[i] = lineno
        state[S_NADDR] = a0 + naddr
        addr_ptr[i + 1] = a0 + naddr
        state[S_NINST] = i + 1
        state[S_REMAIN] -= 1
        state[S_LINES] += 1
        p = nxt
    return OK, p, 0, 0
