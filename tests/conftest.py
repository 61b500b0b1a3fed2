"""Shared fixtures: paths to ../shared data (skipped with a reason when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REFERENCE = SHARED / "reference"
PYTORCH_POW = SHARED / "traces" / "accelsim-pytorch-pow"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    if not (REFERENCE / "results.csv").exists():
        pytest.skip(f"reference data not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture(scope="session")
def pytorch_pow_dir() -> Path:
    if not (PYTORCH_POW / "kernelslist.g").exists():
        pytest.skip(f"real trace not found at {PYTORCH_POW}")
    return PYTORCH_POW


@pytest.fixture
def cache_sim_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The ``cache_key`` of every ``mdm.memory.simulate_app`` call made in this process."""
    import mdm.memory

    calls: list[tuple] = []
    real = mdm.memory.simulate_app

    def spy(app, gpu, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls.append(mdm.memory.cache_key(gpu))
        return real(app, gpu, *a, **kw)

    monkeypatch.setattr(mdm.memory, "simulate_app", spy)
    return calls
