"""The NoC bandwidth a configuration offers: SM ports and FIFO-crossbar head-of-line blocking."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdm.config import load_gpu
from mdm.config.accelsim import import_accelsim
from mdm.config.gpu import fifo_crossbar_packets_per_cycle
from mdm.errors import ConfigError
from mdm.models.roofline import noc_bytes_per_cycle


def _monte_carlo_crossbar(n_in: int, n_out: int, cycles: int, seed: int = 0) -> float:
    """Packets/cycle of a saturated FIFO input-queued crossbar, uniform destinations.

    Every input always has a queue; only its head packet can leave, each output
    takes one of the heads addressed to it (random choice), a sent head is replaced
    by a new packet with a uniform destination.
    """
    rng = np.random.default_rng(seed)
    head = rng.integers(0, n_out, n_in)
    sent = 0
    for _ in range(cycles):
        order = rng.permutation(n_in)
        _, first = np.unique(head[order], return_index=True)
        winners = order[first]
        sent += len(winners)
        head[winners] = rng.integers(0, n_out, len(winners))
    return sent / cycles


def test_square_crossbar_is_karols_two_minus_root_two():
    for n in (1, 8, 64):
        assert fifo_crossbar_packets_per_cycle(n, n) == pytest.approx((2 - math.sqrt(2)) * n)


@given(st.integers(1, 512), st.integers(1, 512))
def test_saturation_bounds_and_symmetry(a, b):
    x = fifo_crossbar_packets_per_cycle(a, b)
    assert x == pytest.approx(fifo_crossbar_packets_per_cycle(b, a))
    assert 0 < x <= min(a, b)
    # more inputs never lower the throughput
    assert fifo_crossbar_packets_per_cycle(a + 1, b) >= x


@pytest.mark.parametrize(("n_in", "n_out"), [(80, 64), (64, 80), (32, 32), (14, 64)])
def test_saturation_matches_a_monte_carlo_switch(n_in, n_out):
    sim = _monte_carlo_crossbar(n_in, n_out, cycles=1500)
    # the closed form is the large-switch limit; finite switches do slightly better
    assert sim == pytest.approx(fifo_crossbar_packets_per_cycle(n_in, n_out), rel=0.04)
    assert sim < min(n_in, n_out)  # blocking is real: some port idles every cycle


def test_noc_gbps_caps():
    gpu = load_gpu("sm7_qv100")
    port = gpu.noc.sm_port_gbps
    assert gpu.noc.fifo_crossbar
    for sms in (1, 14, 40, 80):
        hol = fifo_crossbar_packets_per_cycle(sms, gpu.l2.banks) * port
        expected = min(gpu.noc.bandwidth_gbps, sms * port, hol)
        assert gpu.noc_gbps(sms) == pytest.approx(expected)
        assert noc_bytes_per_cycle(gpu, sms) == pytest.approx(expected / gpu.core_clock_ghz)
    assert gpu.noc_effective_gbps == gpu.noc_gbps(gpu.n_sm) < gpu.noc.bandwidth_gbps
    plain = gpu.with_updates({"noc.fifo_crossbar": False})
    assert plain.noc_gbps(80) == pytest.approx(min(gpu.noc.bandwidth_gbps, 80 * port))
    with pytest.raises(ValueError):
        gpu.noc_gbps(0)


def test_noc_gbps_is_capped_by_the_l2_banks_ports():
    """Every reply leaves through its L2 bank's port, one packet per cycle at the SM
    port's rate (as the cache simulation's bank ports serve them): with fewer banks
    than that covers, the banks' ports bound the NoC. QA: ``l2.banks = 1`` on
    mdm_pascal left every model at the 24-bank prediction while the cache simulation
    took 17x longer."""
    gpu = load_gpu("mdm_pascal")
    port = gpu.noc.sm_port_gbps
    assert gpu.noc_gbps(28) == gpu.noc.bandwidth_gbps < 24 * port  # the preset: unbound
    for banks in (1, 4, 16):
        few = gpu.with_updates({"l2.banks": banks, "l2.size_bytes": 96 * 1024 * banks})
        assert few.noc_gbps(28) == pytest.approx(banks * port)
        assert few.noc_gbps(2) == pytest.approx(min(banks, 2) * port)


def test_fifo_crossbar_needs_a_port_bandwidth():
    gpu = load_gpu("mdm_pascal")
    with pytest.raises(ConfigError, match="fifo_crossbar"):
        gpu.with_updates({"noc.fifo_crossbar": True, "noc.sm_port_gbps": None})


def test_accelsim_network_mode_sets_fifo_crossbar(reference_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm7 = import_accelsim(reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config")
        pascal = import_accelsim(reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config")
    assert sm7.noc.fifo_crossbar and not pascal.noc.fifo_crossbar
    assert pascal.noc_effective_gbps == pytest.approx(pascal.noc.bandwidth_gbps)
