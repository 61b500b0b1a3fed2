"""The cache simulator stores its per-instruction arrays in (estimated, then observed)
issue order: a pure memory-layout change that must never change a result."""

from __future__ import annotations

import numpy as np
from simresult import flat as _flat

from mdm.config.load import load_gpu
from mdm.memory import cachesim, simulate_app
from mdm.traces.workloads import generate


def test_layout_changes_back_and_forth_give_cold_results() -> None:
    """Alternating SM counts re-permutes the stored inputs (static order, observed
    order, order of another layout); every result equals a cold simulation's."""
    app = generate("stride", ctas=96)
    base = load_gpu("mdm_pascal")
    gpus = [base.with_updates({"n_sm": n}) for n in (8, 28, 5)]
    tw = {ki: [0, k.n_warps // 2, k.n_warps - 1] for ki, k in enumerate(app.kernels)}
    cold = []
    for g in gpus:
        cachesim.clear_input_cache()
        cold.append(_flat(simulate_app(app, g, track_warps=tw)))
    cachesim.clear_input_cache()
    for g, want in [
        *zip(gpus, cold, strict=True),
        *zip(gpus, cold, strict=True),
        (gpus[0], cold[0]),
    ]:
        assert _flat(simulate_app(app, g, track_warps=tw)) == want


def test_stored_order_is_a_permutation_and_last_order_is_kernel_order() -> None:
    """After a second simulation of a layout the stored order is the one observed in the
    first: a permutation of the memory instructions whose request arrays hold the same
    requests, equal to ``last_order`` (kernel instruction indices)."""
    app = generate("stride", ctas=64)
    gpu = load_gpu("mdm_pascal")
    kernel = app.kernels[0]
    cachesim.clear_input_cache()
    ref = cachesim._kernel_inputs(kernel, gpu)
    line0, ptr0 = ref.reqs.req_line.copy(), ref.reqs.req_ptr.copy()
    first = cachesim._L2State(gpu)
    cachesim.simulate_kernel(kernel, gpu, first)
    ki = cachesim._kernel_inputs(kernel, gpu)
    assert ki.perm is None and not ki.perm_observed  # kernel order the first time
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(kernel, gpu, l2)
    assert ki.perm_observed
    assert np.array_equal(first.last_order, l2.last_order)
    m = ki.inst.shape[0]
    assert np.array_equal(np.sort(ki.perm), np.arange(m))
    # the observed order is the one the simulation processed
    assert np.array_equal(ki.inst[ki.perm], l2.last_order)
    for pos in (0, m // 3, m - 1):
        j = ki.perm[pos]
        got = ki.reqs.req_line[ki.reqs.req_ptr[pos] : ki.reqs.req_ptr[pos + 1]]
        assert np.array_equal(got, line0[ptr0[j] : ptr0[j + 1]])
    assert np.array_equal(ki.inst_mem[ki.inst[ki.perm]], np.arange(m))
