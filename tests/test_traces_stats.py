"""Trace statistics (``mdm trace info``): DPKI and the divergent-load rule on hand-made kernels."""

from __future__ import annotations

from mdm.profile.handmade import kernel_from_warps
from mdm.traces.model import AppTrace
from mdm.traces.model import InstrClass as C
from mdm.traces.stats import app_stats, divergent_loads, kernel_stats


def test_dpki_is_divergent_loads_per_thousand_warp_instructions() -> None:
    """One warp of 4 instructions: a load whose 32 lanes are 128 B apart (32 lines, where
    the 128 B it reads fit in 1: divergent) and three INTs. DPKI = 1000 * 1 / 4 = 250,
    for the kernel and for an application of that kernel twice (2 / 8 per kilo)."""
    k = kernel_from_warps(
        [[(C.LD_GLOBAL, [1], [0], [128 * i for i in range(32)])] + [(C.INT, [2], [1])] * 3]
    )
    s = kernel_stats(k)
    assert s["warp_instructions"] == 4
    assert s["divergent_loads"] == 1
    assert s["dpki"] == 250.0
    a = app_stats(AppTrace(commands=[k, k], name="two"))
    assert a["divergent_loads"] == 2 and a["warp_instructions"] == 8
    assert a["dpki"] == 250.0


def test_handmade_memory_instructions_are_four_byte_words() -> None:
    """Hand-made memory instructions read 4 B per lane, so 32 lanes 8 B apart (256 B:
    2 lines) touch more lines than their 128 B need (1): divergent; 32 lanes 4 B apart
    from byte 64 touch 2 lines and need ceil((64 + 128) / 128) = 2: not divergent."""
    k = kernel_from_warps(
        [
            [
                (C.LD_GLOBAL, [1], [0], [8 * i for i in range(32)]),
                (C.LD_GLOBAL, [2], [0], [64 + 4 * i for i in range(32)]),
            ]
        ]
    )
    assert list(k.mem_width) == [4, 4]
    assert list(divergent_loads(k)) == [True, False]
