"""SASS opcode table: opcode (with modifiers) -> :class:`InstrClass`, per architecture.

The opcode lists follow the instruction-set reference of NVIDIA's *CUDA Binary
Utilities* (Maxwell/Pascal, Volta, Turing, Ampere/Ada and Hopper tables). An opcode
is classified by its *base mnemonic* (the text before the first ``.``, so
``LDG.E.128.SYS`` -> ``LDG``) and, for a few opcodes, its modifiers.

Choices the documentation leaves open (documented and tested):

* The table is selected by the decade of the kernel's ``-binary version`` (``sm_XY``
  -> ``XY``): 50-69 Maxwell/Pascal (50-62 in use), 70-79 Volta/Turing (70-75), 80-89
  Ampere/Ada, 90-99 Hopper (90), so a minor version not yet used keeps its major
  family's table. Version 0 (real NVBit traces often carry ``-binary version = 0``) or
  any other value (Blackwell's 100 and 120 among them) uses the *union* of all tables:
  an opcode known to any architecture is accepted.
* Generic ``LD``/``ST`` (no state space in the opcode) are classified as global
  load/store, as Accel-Sim does for generic accesses outside the shared/local windows.
* ``ATOMS`` (shared-memory atomic) is a shared load (it returns a value and uses the
  shared-memory pipeline, never L1/L2); ``ATOM``/``ATOMG``/``RED``/``REDG`` and the
  surface/TMA reductions are :attr:`InstrClass.ATOMIC`.
* ``LDGSTS`` (Ampere async global->shared copy), ``UTMALDG``/``UBLKCP`` and
  ``LDGMC`` are global loads; ``UTMASTG`` a global store.
* Conversions (``F2F``, ``F2I``, ``I2F``, ``I2I``, ``FRND``, ``F2IP``, ``I2FP``) run on
  the SFU/XU path (as in Accel-Sim's opcode tables) unless a modifier names ``F64``,
  which makes them :attr:`InstrClass.FP64`.
* Half-precision ALU ops (``HADD2``, ``HFMA2``, ...) are :attr:`InstrClass.FP32`; the
  matrix ops (``HMMA``, ``IMMA``, ``BMMA``, ``DMMA``, ``*GMMA``) are tensor ops.
* ``LDC``/``ULDC`` (constant bank loads), texture and surface loads are
  :attr:`InstrClass.TEX_CONST`; ``SUST`` is a global store.
* ``FSEL`` is accepted on every architecture (the Pascal reference traces under
  ``../shared/reference/traces/sm61`` use it).
* Special-register reads, shuffles, fences, cache control and dependency barriers
  (``S2R``, ``CS2R``, ``SHFL``, ``MEMBAR``, ``DEPBAR``, ``CCTL``, ``NOP``, ...) are
  :attr:`InstrClass.OTHER`; ``BAR`` and the cluster barriers are
  :attr:`InstrClass.BARRIER`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np

from mdm.errors import TraceFormatError
from mdm.traces.model import InstrClass

C = InstrClass


def _table(spec: dict[InstrClass, str]) -> dict[str, InstrClass]:
    out: dict[str, InstrClass] = {}
    for cls, names in spec.items():
        for name in names.split():
            out[name] = cls
    return out


# Opcodes present from Maxwell/Pascal to Hopper.
_COMMON = _table(
    {
        C.INT: "FLO IADD3 IMAD IMNMX IMUL ISCADD ISETP LEA LOP LOP3 LOP32I POPC SHF SHL SHR "
        "IADD IADD32I ISCADD32I IMUL32I MOV MOV32I PRMT SEL PSETP P2R R2P VOTE "
        "VABSDIFF VABSDIFF4",
        C.FP32: "FADD FADD32I FCHK FFMA FFMA32I FMNMX FMUL FMUL32I FSEL FSET FSETP FSWZADD "
        "HADD2 HADD2_32I HFMA2 HFMA2_32I HMUL2 HMUL2_32I HSET2 HSETP2",
        C.FP64: "DADD DFMA DMUL DSETP",
        C.SFU: "MUFU F2F F2I I2F I2I",
        C.LD_GLOBAL: "LD LDG",
        C.ST_GLOBAL: "ST STG SUST",
        C.LD_SHARED: "LDS ATOMS",
        C.ST_SHARED: "STS",
        C.LOCAL: "LDL STL",
        C.ATOMIC: "ATOM RED SUATOM SURED",
        C.TEX_CONST: "LDC TEX TLD TLD4 TXQ SULD",
        C.BRANCH: "BRA BRX JMP JMX RET EXIT BPT",
        C.BARRIER: "BAR",
        C.OTHER: "NOP CS2R S2R B2R R2B DEPBAR MEMBAR CCTL CCTLL CCTLT SHFL",
    }
)

# Maxwell and Pascal (sm_5x, sm_6x) only.
_PASCAL_ONLY = _table(
    {
        C.INT: "BFE BFI ICMP IMADSP ISET XMAD CSET CSETP PSET VADD VADD2 VADD4 VMAD VMNMX "
        "VMNMX2 VMNMX4 VSET VSET2 VSET4 VSETP VSHL VSHR VABSDIFF2",
        C.FP32: "FCMP",
        C.FP64: "DMNMX DSET",
        C.SFU: "RRO",
        C.TEX_CONST: "TEXS TLDS TLD4S TMML TXD TXA",
        C.BRANCH: "SSY SYNC CAL JCAL PRET BRK PBK CONT PCNT PEXIT KIL LONGJMP PLONGJMP RAM SAM RTT",
        C.OTHER: "IDE STP AL2P ALD AST IPA ISBERD OUT PIXLD SETCRSPTR GETCRSPTR",
    }
)

# Volta and Turing (sm_70, sm_72, sm_75); inherited by Ampere and Hopper.
_VOLTA = _table(
    {
        C.INT: "BMSK BREV IABS IDP IDP4A SGXT PLOP3 QSPC R2UR S2UR UBMSK UBREV UCLEA UFLO "
        "UIADD3 UIMAD UISETP ULEA ULOP ULOP3 ULOP32I UMOV UP2UR UPLOP3 UPOPC UPRMT UPSETP "
        "UR2UP USEL USGXT USHF USHL USHR VOTEU I2IP",
        C.SFU: "FRND",
        C.TENSOR: "HMMA IMMA BMMA",
        C.LD_SHARED: "LDSM",
        C.ATOMIC: "ATOMG",
        C.TEX_CONST: "TMML TXD ULDC SUQUERY",
        C.BRANCH: "BMOV BRXU BREAK BSSY BSYNC CALL JMXU KILL NANOSLEEP RPCMOV RTT WARPSYNC YIELD",
        C.OTHER: "ERRBAR GETLMEMBASE LEPC MATCH MOVM PMTRIG SETCTAID SETLMEMBASE",
    }
)

# Ampere and Ada (sm_80, sm_86, sm_87, sm_89); inherited by Hopper.
_AMPERE = _table(
    {
        C.INT: "REDUX CREDUX UF2FP",
        C.FP32: "HMNMX2 F2FP",
        C.SFU: "I2FP F2IP",
        C.TENSOR: "DMMA",
        C.LD_GLOBAL: "LDGSTS",
        C.OTHER: "LDGDEPBAR ARRIVES",
    }
)

# Hopper (sm_90).
_HOPPER = _table(
    {
        C.INT: "VIADD VIADDMNMX VIMNMX VIMNMX3 ELECT UVIADD UVIMNMX",
        C.FP32: "VHMNMX FMNMX3",
        C.TENSOR: "HGMMA IGMMA QGMMA BGMMA",
        C.LD_GLOBAL: "UTMALDG UBLKCP LDGMC",
        C.ST_GLOBAL: "UTMASTG",
        C.ST_SHARED: "STSM STAS",
        C.ATOMIC: "UTMAREDG UBLKRED REDG REDAS",
        C.BARRIER: "UCGABAR_ARV UCGABAR_WAIT UCGABAR_GET UCGABAR_SET",
        C.OTHER: "UTMAPF UBLKPF UTMACCTL UTMACMDFLUSH ACQBULK FENCE SYNCS WARPGROUP "
        "ENDCOLLECTIVE USETMAXREG UMEMSETS CGAERRBAR PREEXIT ULEPC",
    }
)

#: Architecture family name -> base mnemonic -> class.
FAMILIES: dict[str, dict[str, InstrClass]] = {
    "pascal": {**_COMMON, **_PASCAL_ONLY},
    "volta": {**_COMMON, **_VOLTA},
    "ampere": {**_COMMON, **_VOLTA, **_AMPERE},
    "hopper": {**_COMMON, **_VOLTA, **_AMPERE, **_HOPPER},
}
FAMILIES["union"] = {
    k: v for fam in ("pascal", "volta", "ampere", "hopper") for k, v in FAMILIES[fam].items()
}

_CONVERSIONS = frozenset({"F2F", "F2I", "I2F", "I2I", "FRND", "F2IP", "I2FP"})


def family(binary_version: int) -> str:
    """Architecture family of a ``-binary version`` (``sm_XY`` -> ``XY``); see module doc."""
    v = int(binary_version)
    if 50 <= v <= 69:
        return "pascal"
    if 70 <= v <= 79:
        return "volta"
    if 80 <= v <= 89:
        return "ampere"
    if 90 <= v <= 99:
        return "hopper"
    return "union"


def base_mnemonic(opcode: str) -> str:
    """The opcode without its modifiers: ``LDG.E.128.SYS`` -> ``LDG``."""
    return opcode.split(".", 1)[0]


@cache
def classify_one(opcode: str, fam: str) -> InstrClass | None:
    """Class of one opcode string in family ``fam``; ``None`` when unknown."""
    base = base_mnemonic(opcode)
    cls = FAMILIES[fam].get(base)
    if cls is None:
        return None
    mods = opcode.split(".")[1:]
    if base in _CONVERSIONS and any("F64" in m for m in mods):
        return C.FP64
    return cls


def classify(
    opcodes: Sequence[str],
    binary_version: int,
    allow_unknown: bool = False,
    *,
    path: str | None = None,
    lines: Iterable[int | None] | None = None,
) -> np.ndarray:
    """Classify opcode strings; returns ``uint8[len(opcodes)]`` of :class:`InstrClass`.

    An opcode missing from the table of ``binary_version``'s family raises
    :class:`TraceFormatError` naming it (with ``path`` and the matching entry of
    ``lines`` when given), unless ``allow_unknown`` maps it to ``InstrClass.UNKNOWN``.
    """
    fam = family(binary_version)
    out = np.empty(len(opcodes), dtype=np.uint8)
    line_list = list(lines) if lines is not None else [None] * len(opcodes)
    for i, op in enumerate(opcodes):
        cls = classify_one(op, fam)
        if cls is None:
            if not allow_unknown:
                raise TraceFormatError(
                    path or "<opcodes>",
                    line_list[i],
                    f"unknown SASS opcode {op!r} for binary version {binary_version} "
                    f"({fam} table); expected one of the documented {fam} opcodes "
                    "(pass allow_unknown to count it as UNKNOWN)",
                )
            cls = C.UNKNOWN
        out[i] = cls
    return out
