"""What ``simulate_kernel`` keeps per layout in the per-kernel inputs (timed layout, SM and
load flag per memory instruction, per-PC grouping in the stored order) must never change
a result: multi-PC kernels through layout changes and issue-order re-storage."""

from __future__ import annotations

import numpy as np
from simresult import flat as _flat

from mdm.config.load import load_gpu
from mdm.memory import cachesim, simulate_app
from mdm.memory.coalesce import global_memory_instructions
from mdm.traces.workloads import generate


def test_multi_pc_kernels_reused_layouts_equal_cold_results() -> None:
    """spmv_csr and bfs (several load/store PCs): every simulation of a sequence that
    revisits layouts (stored order re-permuted on the second visit) equals a cold one,
    per-PC sums and tracked warps included."""
    base = load_gpu("mdm_pascal")
    gpus = [base.with_updates({"n_sm": n}) for n in (6, 20)]
    for name in ("spmv_csr", "bfs"):
        app = generate(name, ctas=48)
        tw = {ki: [0, k.n_warps // 3, k.n_warps - 1] for ki, k in enumerate(app.kernels)}
        cold = []
        for g in gpus:
            cachesim.clear_input_cache()
            cold.append(_flat(simulate_app(app, g, track_warps=tw)))
        assert any(len(k[1]["pc"]) > 1 for k in cold[0])
        cachesim.clear_input_cache()
        seq = [0, 0, 0, 1, 1, 1, 0, 0, 1]
        for i in seq:
            assert _flat(simulate_app(app, gpus[i], track_warps=tw)) == cold[i]
        # a run without tracked warps gives the same per-PC statistics
        got = _flat(simulate_app(app, gpus[1]))
        assert [(d, pp) for d, pp, _ in got] == [(d, pp) for d, pp, _ in cold[1]]


def test_per_pc_executions_and_accesses_match_kernel() -> None:
    """Per-PC executions equal the count of each PC among the global memory
    instructions, and per-PC L1 accesses sum to the kernel's L1 accesses, after the
    stored order has been re-permuted (third simulation of a layout)."""
    gpu = load_gpu("mdm_pascal")
    app = generate("spmv_csr", ctas=48)
    cachesim.clear_input_cache()
    for _ in range(3):
        res = simulate_app(app, gpu)
    for kernel, st in zip(app.kernels, res.kernels, strict=True):
        pcs = kernel.pc[global_memory_instructions(kernel)]
        upc, n = np.unique(pcs, return_counts=True)
        assert np.array_equal(st.per_pc.pc, upc.astype(np.uint32))
        assert np.array_equal(st.per_pc.executions, n)
        assert int(st.per_pc.l1_accesses.sum()) == st.l1_read_accesses + st.l1_write_accesses


def test_threads_sharing_one_trace_get_serial_results() -> None:
    """Threads of one process (a multi-threaded dask worker) simulating one cached trace
    on alternating layouts get the same results as one after the other: the shared
    per-kernel inputs are updated under the module lock."""
    from concurrent.futures import ThreadPoolExecutor

    base = load_gpu("mdm_pascal")
    gpus = [base.with_updates({"n_sm": n}) for n in (6, 20, 6, 20, 6, 20)]
    app = generate("spmv_csr", ctas=48)
    cachesim.clear_input_cache()
    serial = [_flat(simulate_app(app, g)) for g in gpus]
    cachesim.clear_input_cache()
    with ThreadPoolExecutor(max_workers=3) as pool:
        threaded = list(pool.map(lambda g: _flat(simulate_app(app, g)), gpus))
    assert threaded == serial
