"""Nsight Compute CSV import: unit scaling, metric precedence and the raw page's units
row, on one-launch CSV snippets whose values are read off by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdm.errors import ConfigError
from mdm.explore.ncu import measurement, read_ncu

HEAD = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'


def _details(tmp_path: Path, *metrics: tuple[str, str, str]) -> dict[str, float]:
    """The measurement of one launch of a details page with ``(name, unit, value)``."""
    p = tmp_path / "ncu.csv"
    body = "".join(f'"0","k","{n}","{u}","{v}"\n' for n, u, v in metrics)
    p.write_text(f"==PROF== Disconnected\n{HEAD}{body}")
    (lu,) = read_ncu(p)
    return measurement(p, lu)


@pytest.mark.parametrize(
    ("unit", "value", "us"),
    [("nsecond", "1,500", 1.5), ("ns", "500", 0.5), ("usecond", "2.5", 2.5),
     ("msecond", "1.5", 1500.0), ("ms", "2", 2000.0), ("second", "0.001", 1000.0),
     ("s", "1", 1e6)],
)  # fmt: skip
def test_duration_units_in_microseconds(tmp_path: Path, unit: str, value: str, us: float) -> None:
    """Duration without a cycle count: time_us = value x (1e-3 ns, 1 us, 1e3 ms, 1e6 s)."""
    got = _details(tmp_path, ("Duration", unit, value))
    assert got == {"time_us": pytest.approx(us, rel=1e-12)}


@pytest.mark.parametrize(
    ("unit", "value", "mhz"),
    [("hz", "1,500,000,000", 1500.0), ("Khz", "1,410,000", 1410.0), ("KHZ", "1,410,000", 1410.0),
     ("Mhz", "1,410", 1410.0), ("Ghz", "1.41", 1410.0), ("GHz", "1.2", 1200.0),
     ("cycle/nsecond", "1.5", 1500.0), ("cycle/usecond", "1,400", 1400.0),
     ("cycle/second", "1200000000", 1200.0), ("cycles/msecond", "1,300,000", 1300.0)],
)  # fmt: skip
def test_clock_units_in_mhz(tmp_path: Path, unit: str, value: str, mhz: float) -> None:
    """SM Frequency in any case of hz/khz/mhz/ghz (1e-6, 1e-3, 1, 1e3 MHz) or cycles per
    time unit (1 / the time unit's microseconds: cycle/nsecond x 1e3 MHz ...)."""
    got = _details(tmp_path, ("Elapsed Cycles", "cycle", "100"), ("SM Frequency", unit, value))
    assert got == {"cycles": 100.0, "sm_clock_mhz": pytest.approx(mhz, rel=1e-12)}


@pytest.mark.parametrize(
    ("unit", "value", "cycles"),
    [("", "100", 100.0), ("cycle", "100", 100.0), ("cycles", "7", 7.0),
     ("Kcycle", "2.5", 2500.0), ("kcycle", "2", 2000.0), ("Mcycle", "1.5", 1.5e6),
     ("Gcycle", "2", 2e9)],
)  # fmt: skip
def test_cycle_units(tmp_path: Path, unit: str, value: str, cycles: float) -> None:
    """Elapsed Cycles with no unit, ``cycle``, or a k/K/M/G prefix (1e3, 1e3, 1e6, 1e9)."""
    assert _details(tmp_path, ("Elapsed Cycles", unit, value)) == {"cycles": cycles}


def test_first_cycle_metric_wins_and_no_duration_with_cycles(tmp_path: Path) -> None:
    """Raw page with sm__cycles_elapsed.max 120, sm__cycles_elapsed.avg 100 and a duration:
    cycles = 100 (avg comes first in CYCLE_METRICS, whatever the column order), no
    time_us (the duration is used only without a cycle count); gpc clock 1.5 GHz."""
    p = tmp_path / "raw.csv"
    p.write_text(
        '"ID","Kernel Name","sm__cycles_elapsed.max","gpu__time_duration.sum",'
        '"sm__cycles_elapsed.avg","gpc__cycles_elapsed.avg.per_second"\n'
        '"","","cycle","nsecond","cycle","Ghz"\n'
        '"0","k","120","80","100","1.5"\n'
    )
    (lu,) = read_ncu(p)
    assert measurement(p, lu) == {"cycles": 100.0, "sm_clock_mhz": 1500.0}


def test_raw_units_row_without_any_unit(tmp_path: Path) -> None:
    """A raw page whose units row is all empty (``"","",""``: no field left once the
    empty trailing ones go) is still the units row, not a launch: one launch, 100 cycles."""
    p = tmp_path / "raw.csv"
    p.write_text('"ID","Kernel Name","sm__cycles_elapsed.avg"\n"","",""\n"0","k","100"\n')
    launches = read_ncu(p)
    assert [lu.id for lu in launches] == ["0"]
    assert measurement(p, launches[0]) == {"cycles": 100.0}


def test_zero_is_not_a_measurement(tmp_path: Path) -> None:
    """A cycle count of 0 is refused (must be positive), naming its line (3)."""
    with pytest.raises(ConfigError, match=r"line 3: Elapsed Cycles must be positive"):
        _details(tmp_path, ("Elapsed Cycles", "cycle", "0"))


def test_a_preset_name_stays_a_name_beside_a_folder_of_that_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--gpu mdm_pascal`` run where a folder ``mdm_pascal`` exists: load_gpu reads the
    preset first, so the table keeps the name (not ../mdm_pascal); a builtin trace spec
    is kept as written; a config file's path is written relative to the table's folder."""
    from mdm.explore.ncu import ncu_to_measured

    data = Path(__file__).parent / "data" / "ncu_details.csv"
    trace = "builtin:stencil2d?W=64&H=32&sweeps=2"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mdm_pascal").mkdir()
    df = ncu_to_measured(data, trace, "mdm_pascal", tmp_path / "x" / "m.csv")
    assert list(df["gpu"]) == ["mdm_pascal"] * 2 and list(df["trace"]) == [trace] * 2
    (tmp_path / "my.yaml").write_text("")
    df = ncu_to_measured(data, trace, "my.yaml", tmp_path / "x" / "m.csv")
    assert list(df["gpu"]) == [str(Path("..") / "my.yaml")] * 2
