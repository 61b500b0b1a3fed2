"""L2 address mapping of GPGPU-Sim / Accel-Sim: memory sub-partition (bank) and set index.

Both functions are GPGPU-Sim 4.x's, bit for bit:

* **IPOLY** (``ipoly_hash_function`` of ``hashing.cc``; Rau et al., ISCA 1991, equations
  from Khairy et al., IEEE TPDS 2017): for ``n`` = 16, 32 or 64 output values
  (polynomials IPOLY(5), IPOLY(37), IPOLY(67)), output bit ``i`` is the XOR of the
  input ``index`` bit ``i`` and the parity of ``higher_bits & IPOLY_MASKS[n][i]``.
* **Memory partition** (``linear_to_raw_address_translation::addrdec_tlx``, dev branch):
  with ``C`` channels of ``P`` sub-partitions, ``2**s`` B interleaving (``dramid@s``) the
  pre-hash sub-partition is ``chip * P + (bank & (P - 1))`` with ``chip = (addr >> s) mod
  C`` and the DRAM bank's low bits; ``consecutive`` (indexing 0) keeps it, ``ipoly``
  (indexing 2) hashes it with ``higher_bits = addr >> (s + log2 C + log2 P)`` and
  ``n = C * P``. Choice made here: the sub-partition bits are the address bits just above
  the channel bits (``addr >> (s + log2 C)``), which is where the lowest DRAM bank bit sits
  in ``SM7_QV100``'s ``-gpgpu_mem_addr_mapping`` (``...RBBBCCCB.CCCSSSSS``, bank bit 8
  moved to 13 by the 5 channel bits inserted at 8). Bank ids are therefore
  ``chip * P + sub``; with ``P = 1`` this is ``chip`` = ``(addr >> s) mod C``.
* **L2 set** (``l2_cache_config::set_index``): on the partition address, i.e. ``addr``
  with the ``log2(C * P)`` channel and sub-partition bits at ``s`` removed
  (``partition_address``), then ``linear``: ``(a >> line_log2) mod sets``, or ``ipoly``
  (``cache_config::hash_function`` ``P``): ``ipoly(a >> (line_log2 + log2 sets),
  (a >> line_log2) mod sets, sets)``, or ``xor`` (``X``, ``bitwise_hash_function``):
  ``((a >> line_log2) mod sets) ^ ((a >> (line_log2 + log2 sets)) mod sets)``.
* **Bitwise-XOR partitions** (indexing 1, ``BITWISE_PERMUTATION``, power-of-two
  channels): ``chip ^= (addr >> (s + log2 C + log2 P)) mod C`` before the sub-partition is
  added.
* **General path** (:func:`_map_general`), GPGPU-Sim's ``addrdec_tlx`` for any channel
  count ``C`` and ``P = banks / C`` sub-partitions (a power of two): ``chunk = addr >> s``,
  ``chip = chunk mod C``, ``q = chunk div C`` and the *rest* address ``(q << s) | (addr mod
  2**s)``, i.e. the address with the channel taken out (for a power-of-two ``C`` the
  channel bits at ``s``; otherwise, the "gap" case, by division). The sub-partition is
  read from the rest address at ``l2.sub_partition_bits`` (the lowest DRAM-bank bits of
  ``-gpgpu_mem_addr_mapping``, as ``sub_partition_id_mask``; default the bits at ``s``),
  and the partition address is the rest address without them. IPOLY hashes ``chip * P +
  sub`` into ``nextpow2(C) * P`` values with ``higher = q >> log2 P`` (``q`` itself in the
  gap case, as GPGPU-Sim's ``rest_of_addr_high_bits``) and takes it ``mod C * P`` when
  ``C`` is not a power of two (SM7_TITANV: 24 channels x 2, IPOLY(67) then mod 48).
  ``random`` (indexing 4) gives each ``2**s / P``-byte granule (``addr >> (s - log2 P)``)
  a uniformly distributed sub-partition; GPGPU-Sim draws it with ``rand()`` when the
  granule is first seen, so the simulator's draw depends on the run's access order and
  cannot be reproduced: here it is a fixed 64-bit mix (splitmix64) of the granule, the
  same distribution, not the same draw.
"""

from __future__ import annotations

import numpy as np

from mdm._jit import njit
from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError

# hashing.cc ipoly_hash_function: input bits of `higher_bits` XORed into output bit i
_IPOLY_BITS: dict[int, tuple[tuple[int, ...], ...]] = {
    16: (
        (11, 10, 9, 8, 6, 4, 3, 0),
        (12, 8, 7, 6, 5, 3, 1, 0),
        (9, 8, 7, 6, 4, 2, 1),
        (10, 9, 8, 7, 5, 3, 2),
    ),
    32: (
        (13, 12, 11, 10, 9, 6, 5, 3, 0),
        (14, 13, 12, 11, 10, 7, 6, 4, 1),
        (14, 10, 9, 8, 7, 6, 3, 2, 0),
        (11, 10, 9, 8, 7, 4, 3, 1),
        (12, 11, 10, 9, 8, 5, 4, 2),
    ),
    64: (
        (18, 17, 16, 15, 12, 10, 6, 5, 0),
        (15, 13, 12, 11, 10, 7, 5, 1, 0),
        (16, 14, 13, 12, 11, 8, 6, 2, 1),
        (17, 15, 14, 13, 12, 9, 7, 3, 2),
        (18, 16, 15, 14, 13, 10, 8, 4, 3),
        (17, 16, 15, 14, 11, 9, 5, 4),
    ),
}


def _masks(n: int) -> np.ndarray:
    return np.array([sum(1 << b for b in bits) for bits in _IPOLY_BITS[n]], np.int64)


IPOLY_MASKS: dict[int, np.ndarray] = {n: _masks(n) for n in _IPOLY_BITS}
_MASK_TABLE = np.zeros((65, 6), np.int64)  # row n: masks of IPOLY for n outputs
for _n, _m in IPOLY_MASKS.items():
    _MASK_TABLE[_n, : _m.shape[0]] = _m

BANK_CONSECUTIVE = 0
BANK_IPOLY = 1
BANK_XOR = 2
BANK_RANDOM = 3
SET_LINEAR = 0
SET_IPOLY = 1
SET_XOR = 2
_BANK_FN = {
    "consecutive": BANK_CONSECUTIVE,
    "ipoly": BANK_IPOLY,
    "bitwise_xor": BANK_XOR,
    "random": BANK_RANDOM,
}
_SET_FN = {"linear": SET_LINEAR, "ipoly": SET_IPOLY, "xor": SET_XOR}


@njit(cache=True, inline="always")
def _parity(x: np.int64) -> np.int64:
    x ^= x >> 32
    x ^= x >> 16
    x ^= x >> 8
    x ^= x >> 4
    x ^= x >> 2
    x ^= x >> 1
    return x & 1


@njit(cache=True, inline="always")
def _log2_ceil(n: np.int64) -> np.int64:
    """Smallest ``k`` with ``2**k >= n`` (the exponent of a power of two)."""
    k = np.int64(0)
    while (np.int64(1) << k) < n:
        k += 1
    return k


@njit(cache=True)
def ipoly_hash(higher: np.int64, index: np.int64, n: np.int64, table: np.ndarray) -> np.int64:
    """GPGPU-Sim ``ipoly_hash_function(higher, index, n)``, ``n`` in {16, 32, 64}."""
    out = np.int64(0)
    nbits = 4 if n == 16 else (5 if n == 32 else 6)
    for i in range(nbits):
        bit = _parity(higher & table[n, i]) ^ ((index >> i) & 1)
        out |= bit << i
    return out


@njit(cache=True, inline="always")
def _set_index(
    local: np.int64,
    line_log2: np.int64,
    sets: np.int64,
    set_log2: np.int64,
    set_fn: np.int64,
    table: np.ndarray,
) -> np.int64:
    """L2 set of a partition address: linear, IPOLY or XOR (module docstring)."""
    idx = (local >> line_log2) % sets
    if set_fn == SET_IPOLY:
        idx = ipoly_hash(local >> (line_log2 + set_log2), idx, sets, table)
    elif set_fn == SET_XOR:
        idx ^= (local >> (line_log2 + set_log2)) & (sets - 1)
    return idx


@njit(cache=True)
def _map_lines(
    lines: np.ndarray,
    line_log2: np.int64,
    il_log2: np.int64,
    channels: np.int64,
    subs: np.int64,
    sets: np.int64,
    bank_fn: np.int64,
    set_fn: np.int64,
    table: np.ndarray,
    bank: np.ndarray,
    sset: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Fill ``bank`` and ``sset`` (power-of-two banks) and return them."""
    n = lines.shape[0]
    ch_log2 = _log2_ceil(channels)
    sub_log2 = _log2_ceil(subs)
    set_log2 = _log2_ceil(sets)
    nbanks = channels * subs
    drop = ch_log2 + sub_log2
    for r in range(n):
        addr = lines[r] << line_log2
        chip = (addr >> il_log2) % channels
        sub = (addr >> (il_log2 + ch_log2)) & (subs - 1)
        if bank_fn == BANK_XOR:  # bitwise_hash_function on the channel
            chip ^= (addr >> (il_log2 + drop)) & (channels - 1)
        b = chip * subs + sub
        if bank_fn == BANK_IPOLY:
            b = ipoly_hash(addr >> (il_log2 + drop), b, nbanks, table)
        bank[r] = b
        # partition address: channel and sub-partition bits removed
        local = ((addr >> (il_log2 + drop)) << il_log2) | (addr & ((np.int64(1) << il_log2) - 1))
        sset[r] = _set_index(local, line_log2, sets, set_log2, set_fn, table)
    return bank, sset


#: Integers below this are exact in float64, and so is the floor of their quotient by
#: any smaller positive integer computed by one float division (:func:`_map_gap`).
_FLOAT_EXACT = np.int64(1) << 52


@njit(cache=True)
def _map_gap(
    lines: np.ndarray,
    line_log2: np.int64,
    il: np.int64,
    banks: np.int64,
    line_bytes: np.int64,
    sets: np.int64,
    set_fn: np.int64,
    table: np.ndarray,
    bank: np.ndarray,
    sset: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Non-power-of-two banks (GPGPU-Sim's "gap" path): ``chunk = addr // il``, bank
    ``chunk mod banks``, partition address ``local = (chunk // banks) * il + addr mod il``
    (``partition_address``), set ``(local // line) mod sets``, hashed by IPOLY or XOR
    (``set_fn``). Fills ``bank`` and ``sset`` in one pass and returns them (lines are
    non-negative)."""
    n = lines.shape[0]
    if set_fn == SET_IPOLY or set_fn == SET_XOR:
        set_log2 = _log2_ceil(sets)
        for r in range(n):
            addr = lines[r] << line_log2
            chunk = addr // il
            bank[r] = chunk % banks
            local = (chunk // banks) * il + addr % il
            sset[r] = _set_index(local, line_log2, sets, set_log2, set_fn, table)
        return bank, sset
    if il & (il - 1) == 0 and sets & (sets - 1) == 0:
        # power-of-two interleave, line and sets: shifts and masks (the same values for
        # non-negative addresses), one unsigned division by the bank count per line
        # (numba's signed floor division adds sign fix-ups)
        il_log2 = _log2_ceil(il)
        top = lines.max() if n > 0 else np.int64(0)
        # chunk // banks as a float division where it is exact, which vectorises (3x
        # faster than the integer one): below 2^52 the rounded quotient never reaches
        # the next integer (x = q * banks + r, r < banks: x / banks is at least 1 / banks
        # below q + 1, more than half a unit in the last place)
        exact = top >> (62 - line_log2) == 0 and (top << line_log2) >> il_log2 < _FLOAT_EXACT
        fb = np.float64(banks)
        ub = np.uint64(banks)
        for r in range(n):
            addr = lines[r] << line_log2
            chunk = addr >> il_log2
            if exact:
                q = np.int64(np.float64(chunk) / fb)
            else:
                q = np.int64(np.uint64(chunk) // ub)
            bank[r] = chunk - q * banks
            local = (q << il_log2) | (addr & (il - 1))
            sset[r] = (local >> line_log2) & (sets - 1)
        return bank, sset
    for r in range(n):
        addr = lines[r] << line_log2
        chunk = addr // il
        bank[r] = chunk % banks
        local = (chunk // banks) * il + addr % il
        sset[r] = (local // line_bytes) % sets
    return bank, sset


@njit(cache=True, inline="always")
def _splitmix64(x: np.uint64) -> np.uint64:
    """splitmix64's finaliser (Steele et al., OOPSLA 2014): a bijective 64-bit mix."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def _map_general(
    lines: np.ndarray,
    line_log2: np.int64,
    il_log2: np.int64,
    channels: np.int64,
    subs: np.int64,
    sub_bits: np.ndarray,
    sets: np.int64,
    bank_fn: np.int64,
    set_fn: np.int64,
    table: np.ndarray,
    bank: np.ndarray,
    sset: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """GPGPU-Sim's ``addrdec_tlx`` and ``partition_address`` for any channel count (the
    module docstring's general path); fills ``bank`` and ``sset`` and returns them."""
    n = lines.shape[0]
    gap = channels & (channels - 1) != 0
    ch_log2 = _log2_ceil(channels)
    sub_log2 = _log2_ceil(subs)
    set_log2 = _log2_ceil(sets)
    nbanks = channels * subs
    n_hash = (np.int64(1) << ch_log2) * subs  # nextPowerOf2(C) * P
    low_mask = (np.int64(1) << il_log2) - 1
    nsub = sub_bits.shape[0]
    for r in range(n):
        addr = lines[r] << line_log2
        chunk = addr >> il_log2
        if gap:
            chip = chunk % channels
            q = chunk // channels
            higher = q
        else:
            chip = chunk & (channels - 1)
            q = chunk >> ch_log2
            higher = q >> sub_log2
        local = (q << il_log2) | (addr & low_mask)  # rest_of_addr
        sub = np.int64(0)
        for j in range(nsub):
            sub |= ((local >> sub_bits[j]) & 1) << j
        for j in range(nsub - 1, -1, -1):  # partition address: sub-partition bits removed
            bit = sub_bits[j]
            local = ((local >> (bit + 1)) << bit) | (local & ((np.int64(1) << bit) - 1))
        if bank_fn == BANK_XOR:
            chip ^= higher & (channels - 1)
        b = chip * subs + sub
        if bank_fn == BANK_IPOLY:
            b = ipoly_hash(higher, b, n_hash, table)
            if gap:
                b %= nbanks
        elif bank_fn == BANK_RANDOM:
            granule = np.uint64(addr >> (il_log2 - sub_log2))
            b = np.int64(_splitmix64(granule) % np.uint64(nbanks))
        bank[r] = b
        sset[r] = _set_index(local, line_log2, sets, set_log2, set_fn, table)
    return bank, sset


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def _next_pow2(x: int) -> int:
    return 1 << (x - 1).bit_length()


def check_l2_mapping(gpu: GPUConfig) -> list[str]:
    """Reasons why :func:`l2_bank_and_set` cannot map ``gpu``'s L2 (empty when it can)."""
    l2 = gpu.l2
    out = []
    if l2.bank_index not in _BANK_FN:
        out.append(f"l2.bank_index={l2.bank_index!r} (only {', '.join(map(repr, _BANK_FN))})")
    if l2.set_index == "ipoly" and l2.sets_per_bank not in IPOLY_MASKS:
        out.append(f"l2.set_index='ipoly' needs 16, 32 or 64 sets per bank, not {l2.sets_per_bank}")
    if l2.set_index == "xor" and not _pow2(l2.sets_per_bank):
        out.append(f"l2.set_index='xor' needs power-of-two sets per bank, not {l2.sets_per_bank}")
    channels = gpu.dram.channels
    split = l2.bank_index != "consecutive" or l2.sub_partition_bits is not None
    if not split:
        return out
    if l2.banks % channels:
        out.append(f"l2.banks={l2.banks} is not a multiple of dram.channels={channels}")
        return out
    subs = l2.banks // channels
    if not _pow2(subs):
        out.append(f"l2.banks / dram.channels = {subs} sub-partitions is not a power of two")
    if not _pow2(l2.bank_interleave_bytes):
        out.append(
            f"l2.bank_index={l2.bank_index!r} needs power-of-two bank_interleave_bytes, "
            f"not {l2.bank_interleave_bytes}"
        )
    elif l2.bank_interleave_bytes < subs:
        out.append("l2.bank_interleave_bytes is below the sub-partitions per channel")
    bits = l2.sub_partition_bits
    if bits is not None and _pow2(subs) and len(bits) != subs.bit_length() - 1:
        out.append(
            f"l2.sub_partition_bits={bits} gives {len(bits)} bit(s), but "
            f"l2.banks / dram.channels = {l2.banks} / {channels} = {subs} sub-partitions "
            f"per channel need log2({subs}) = {subs.bit_length() - 1}: change "
            "l2.sub_partition_bits (or none) with l2.banks or dram.channels"
        )
    if l2.bank_index == "ipoly" and _next_pow2(channels) * subs not in IPOLY_MASKS:
        out.append(
            "l2.bank_index='ipoly' needs nextpow2(dram.channels) x sub-partitions of 16, 32 "
            f"or 64 (GPGPU-Sim's IPOLY hashes), not {_next_pow2(channels)} x {subs}"
        )
    if l2.bank_index == "bitwise_xor" and not _pow2(channels):
        out.append("l2.bank_index='bitwise_xor' needs power-of-two dram.channels")
    return out


def index_dtype(n: int) -> type[np.signedinteger]:
    """dtype of an index in ``0 .. n - 1``: int16 when it fits, else int32."""
    return np.int16 if n <= np.iinfo(np.int16).max + 1 else np.int32


def l2_bank_and_set(lines: np.ndarray, gpu: GPUConfig) -> tuple[np.ndarray, np.ndarray]:
    """L2 bank (memory sub-partition) and set of each line index (``addr // line_bytes``),
    as two arrays of :func:`index_dtype` (int16 for every preset).

    Banks are numbered ``chip * P + sub`` as GPGPU-Sim numbers sub-partitions, over
    ``dram.channels`` channels of ``P = banks / channels``: ``consecutive`` keeps that
    number, ``ipoly`` hashes it, ``bitwise_xor`` XORs the channel with the address bits
    above the sub-partition bits, ``random`` draws it per granule (module docstring). Where
    the banks are no power-of-two multiple of the channels, or the interleave is no power
    of two, ``consecutive`` banks are ``(addr // interleave) mod banks``.
    """
    problems = check_l2_mapping(gpu)
    if problems:
        raise ConfigError(None, f"L2 mapping of {gpu.name!r}: " + "; ".join(problems))
    l2 = gpu.l2
    lines = np.ascontiguousarray(lines, dtype=np.int64)
    # outputs allocated by NumPy: huge pages for large arrays, where numba's allocator
    # page-faults every 4 KiB (12.6 M lines: 131 -> 40 ms); int16 where the banks and the
    # sets per bank fit (else int32): a quarter of int64's bytes to write here and to
    # read per request in the cache simulation
    out = (
        np.empty(lines.shape[0], index_dtype(l2.banks)),
        np.empty(lines.shape[0], index_dtype(l2.sets_per_bank)),
    )
    line_log2 = int(l2.line_bytes).bit_length() - 1
    il = l2.bank_interleave_bytes
    il_log2 = il.bit_length() - 1  # used only where il is a power of two
    channels = gpu.dram.channels
    subs = l2.banks // channels if l2.banks % channels == 0 else 0
    split = _pow2(subs) and _pow2(il) and il >= subs
    bits = l2.sub_partition_bits
    default_bits = split and (bits is None or bits == tuple(range(il_log2, il_log2 + len(bits))))
    pow2 = _pow2(l2.banks) and _pow2(il)
    if l2.bank_index != "random" and pow2 and default_bits and _pow2(channels):
        # channel bits at s, sub-partition bits above them: shifts and masks
        return _map_lines(
            lines,
            line_log2,
            il_log2,
            channels,
            subs,
            l2.sets_per_bank,
            _BANK_FN[l2.bank_index],
            _SET_FN[l2.set_index],
            _MASK_TABLE,
            *out,
        )
    if split and (l2.bank_index != "consecutive" or subs > 1 or not default_bits):
        sub_bits = (
            np.array(bits, np.int64)
            if bits is not None
            else np.arange(subs.bit_length() - 1, dtype=np.int64) + il_log2
        )
        return _map_general(
            lines,
            line_log2,
            il_log2,
            channels,
            subs,
            sub_bits,
            l2.sets_per_bank,
            _BANK_FN[l2.bank_index],
            _SET_FN[l2.set_index],
            _MASK_TABLE,
            *out,
        )
    # consecutive banks, one per channel or a split GPGPU-Sim cannot express (e.g. a
    # non-power-of-two interleave): chunk mod banks, GPGPU-Sim's "gap" arithmetic
    return _map_gap(
        lines,
        line_log2,
        il,
        l2.banks,
        l2.line_bytes,
        l2.sets_per_bank,
        _SET_FN[l2.set_index],
        _MASK_TABLE,
        *out,
    )
