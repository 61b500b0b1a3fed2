"""SASS opcode table: base mnemonics, per-family classification, unknown opcodes."""

from __future__ import annotations

import numpy as np
import pytest

from mdm.errors import TraceFormatError
from mdm.traces.model import InstrClass as C
from mdm.traces.opcodes import FAMILIES, base_mnemonic, classify, family


def test_base_mnemonic_strips_modifiers() -> None:
    assert base_mnemonic("LDG.E.128.SYS") == "LDG"
    assert base_mnemonic("IMAD.WIDE.U32") == "IMAD"
    assert base_mnemonic("EXIT") == "EXIT"


@pytest.mark.parametrize(
    ("version", "fam"),
    [(61, "pascal"), (60, "pascal"), (52, "pascal"), (70, "volta"), (75, "volta"),
     (80, "ampere"), (86, "ampere"), (89, "ampere"), (90, "hopper"), (0, "union"),
     (100, "union"), (-1, "union")],
)  # fmt: skip
def test_family_by_binary_version(version: int, fam: str) -> None:
    assert family(version) == fam


GOLDEN = [
    ("LDG.E.128.SYS", C.LD_GLOBAL),
    ("LD.E.64", C.LD_GLOBAL),
    ("STG.E.SYS", C.ST_GLOBAL),
    ("ST.E", C.ST_GLOBAL),
    ("LDS.U.128", C.LD_SHARED),
    ("STS.64", C.ST_SHARED),
    ("ATOMS.ADD", C.LD_SHARED),
    ("LDL.64", C.LOCAL),
    ("STL", C.LOCAL),
    ("ATOM.E.ADD.STRONG.GPU", C.ATOMIC),
    ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU", C.ATOMIC),
    ("LDC.64", C.TEX_CONST),
    ("TEX.SCR.LL", C.TEX_CONST),
    ("TLD.LZ", C.TEX_CONST),
    ("DADD", C.FP64),
    ("DFMA.RM", C.FP64),
    ("DMUL", C.FP64),
    ("F2F.F64.F32", C.FP64),
    ("I2F.F64", C.FP64),
    ("F2I.FTZ.TRUNC", C.SFU),
    ("MUFU.RSQ", C.SFU),
    ("FFMA.FTZ", C.FP32),
    ("HFMA2.MMA", C.FP32),
    ("FSETP.GT.AND", C.FP32),
    ("FMNMX", C.FP32),
    ("IADD3.X", C.INT),
    ("LOP3.LUT", C.INT),
    ("SHF.R.U32.HI", C.INT),
    ("IMAD.MOV.U32", C.INT),
    ("ISETP.GE.U32.AND", C.INT),
    ("PSETP.AND", C.INT),
    ("P2R", C.INT),
    ("R2P", C.INT),
    ("MOV", C.INT),
    ("SEL", C.INT),
    ("PRMT", C.INT),
    ("POPC", C.INT),
    ("FLO.U32", C.INT),
    ("VOTE.ANY", C.INT),
    ("S2R", C.OTHER),
    ("CS2R", C.OTHER),
    ("SHFL.BFLY", C.OTHER),
    ("NOP", C.OTHER),
    ("DEPBAR.LE", C.OTHER),
    ("MEMBAR.GL", C.OTHER),
    ("CCTL.IVALL", C.OTHER),
    ("BAR.SYNC", C.BARRIER),
    ("BRA", C.BRANCH),
    ("EXIT", C.BRANCH),
    ("RET.ABS", C.BRANCH),
]


@pytest.mark.parametrize(("op", "cls"), GOLDEN)
def test_golden_union(op: str, cls: C) -> None:
    assert classify([op], 0)[0] == cls


@pytest.mark.parametrize(
    ("op", "version", "cls"),
    [
        ("XMAD.PSL.CBCC", 61, C.INT),
        ("SSY", 61, C.BRANCH),
        ("SYNC", 61, C.BRANCH),
        ("RRO.EX2", 61, C.SFU),
        ("BSSY", 70, C.BRANCH),
        ("BSYNC", 75, C.BRANCH),
        ("HMMA.1688.F32", 75, C.TENSOR),
        ("IMMA.8816.S8.S8", 75, C.TENSOR),
        ("ULDC.64", 75, C.TEX_CONST),
        ("UIADD3", 75, C.INT),
        ("LDSM.16.M88.4", 75, C.LD_SHARED),
        ("ERRBAR", 70, C.OTHER),
        ("LDGSTS.E.BYPASS.128", 80, C.LD_GLOBAL),
        ("DMMA.884", 80, C.TENSOR),
        ("LDGDEPBAR", 86, C.OTHER),
        ("HGMMA.64x128x16.F32", 90, C.TENSOR),
        ("UTMALDG.2D", 90, C.LD_GLOBAL),
        ("STSM.16.M88.4", 90, C.ST_SHARED),
        ("SYNCS.ARRIVE.TRANS64", 90, C.OTHER),
    ],
)
def test_golden_per_family(op: str, version: int, cls: C) -> None:
    assert classify([op], version)[0] == cls


@pytest.mark.parametrize(
    ("op", "version"),
    [("XMAD", 70), ("SSY", 80), ("BSSY", 61), ("LDGSTS", 75), ("HGMMA", 86), ("ULDC", 61)],
)
def test_opcode_of_other_family_is_unknown(op: str, version: int) -> None:
    with pytest.raises(TraceFormatError, match=op):
        classify([op], version)
    # ... but known to the union table used for binary version 0
    assert classify([op], 0)[0] != C.UNKNOWN


def test_unknown_raises_with_name_file_line_or_counts() -> None:
    with pytest.raises(TraceFormatError) as ei:
        classify(["FADD", "FROBNICATE.X"], 70, path="k.traceg", lines=[3, 9])
    msg = str(ei.value)
    assert "FROBNICATE.X" in msg and "k.traceg:9" in msg
    out = classify(["FADD", "FROBNICATE.X"], 70, allow_unknown=True)
    assert out.dtype == np.uint8
    assert list(out) == [C.FP32, C.UNKNOWN]


def test_union_is_superset_of_every_family() -> None:
    for fam in ("pascal", "volta", "ampere", "hopper"):
        for k, v in FAMILIES[fam].items():
            assert FAMILIES["union"][k] == v
    assert all(v != C.UNKNOWN for v in FAMILIES["union"].values())


def test_volta_table_is_inherited_by_ampere_and_hopper() -> None:
    """Module doc: the Volta/Turing table is "inherited by Ampere and Hopper" and the
    Ampere/Ada one by Hopper, so every opcode of the older table keeps its class in the
    newer family (e.g. ``BSSY``, ``HMMA``, ``ULDC`` at sm_80)."""
    for old, new in (("volta", "ampere"), ("volta", "hopper"), ("ampere", "hopper")):
        for op, cls in FAMILIES[old].items():
            assert FAMILIES[new].get(op) == cls, (old, new, op)
    assert list(classify(["BSSY", "HMMA.16816.F32", "ULDC.64"], 80)) == [
        C.BRANCH,
        C.TENSOR,
        C.TEX_CONST,
    ]


@pytest.mark.parametrize("op", ["RED.E.ADD.F64.RN.STRONG.GPU", "ATOM.E.ADD.F64.RN.STRONG.GPU"])
def test_f64_modifier_makes_only_conversions_fp64(op: str) -> None:
    """Module doc: a conversion is FP64 when a modifier names ``F64``; a double-precision
    atomic add (``RED``/``ATOM`` with an ``F64`` modifier, sm_60+) stays an atomic."""
    assert classify([op], 70)[0] == C.ATOMIC
    assert classify([op], 61)[0] == C.ATOMIC


@pytest.mark.parametrize(
    ("version", "fam"),
    [(50, "pascal"), (63, "pascal"), (69, "pascal"), (70, "volta"), (76, "volta")]
    + [(79, "volta"), (89, "ampere"), (90, "hopper"), (99, "hopper")]
    + [(0, "union"), (49, "union"), (100, "union"), (120, "union")],
)
def test_family_is_chosen_by_the_decade_of_the_version(version: int, fam: str) -> None:
    """Module doc: the table is chosen by the version's decade (50-69, 70-79, 80-89,
    90-99), so an unused minor version keeps its major family's table; 0, older and
    newer versions (Blackwell's 100, 120) use the union."""
    assert family(version) == fam
