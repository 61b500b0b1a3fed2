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
