"""Measured tables: reading and checking the cells, labels, run ids and kernel choice
(no prediction; values read off the hand-written tables)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from mdm.errors import ConfigError
from mdm.explore.measured import gpu_label, load_measured, select_kernel, trace_label


def _csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_cells_labels_and_default_run_ids(tmp_path: Path) -> None:
    """Row 1: kernel written "3.0" is index 3, class "md" is MD, no sweep_param is
    baseline, id <trace>__<gpu>__k3. Row 2: kernel by name -> __<name>; labels of a
    kernelslist.g (its folder t) and of a gpgpusim.config (its folder cfg). Row 3: no
    kernel, no class -> unknown, a .mdmtrace's stem; row 4 would repeat row 3's id, so
    it gets __row4. Rates: empty -> NaN."""
    p = _csv(
        tmp_path / "m.csv",
        "trace,gpu,kernel,cycles,time_us,class,sweep_param,l2_miss_rate\n"
        "builtin:vecadd,mdm_pascal,3.0,1000,,md,,0.5\n"
        "t/kernelslist.g,cfg/gpgpusim.config,foo,,2.5,NMD,n_sm,\n"
        "x.mdmtrace,a/b.toml,,7,,,,1\n"
        "x.mdmtrace,a/b.toml,,8,,,,0\n",
    )
    t = load_measured(p)
    assert list(t["kernel"]) == ["3", "foo", "", ""]
    assert list(t["class"]) == ["MD", "NMD", "unknown", "unknown"]
    assert list(t["sweep_param"]) == ["baseline", "n_sm", "baseline", "baseline"]
    assert list(t["trace_label"]) == ["builtin:vecadd", "t", "x", "x"]
    assert list(t["gpu_label"]) == ["mdm_pascal", "cfg", "b", "b"]
    assert list(t["run_id"]) == [
        "builtin:vecadd__mdm_pascal__k3",
        "t__cfg__foo",
        "x__b",
        "x__b__row4",
    ]
    assert t["cycles"].iloc[0] == 1000.0 and math.isnan(t["cycles"].iloc[1])
    assert t["time_us"].iloc[1] == 2.5
    assert t["l2_miss_rate"].iloc[0] == 0.5 and math.isnan(t["l2_miss_rate"].iloc[1])
    assert list(t["l2_miss_rate"].iloc[2:]) == [1.0, 0.0]  # both ends of [0, 1]


def test_parquet_integer_floats_read_as_in_a_csv(tmp_path: Path) -> None:
    """A Parquet table's float columns (kernel 3.0 / NaN, sweep_value 14.0 / 28.0) read
    as the CSV's cells "3" / "" and "14" / "28" would."""
    p = tmp_path / "m.parquet"
    pd.DataFrame(
        {"trace": ["builtin:vecadd"] * 2, "gpu": ["mdm_pascal"] * 2,
         "kernel": [3.0, float("nan")], "cycles": [10.0, 20.0],
         "sweep_param": ["n_sm"] * 2, "sweep_value": [14.0, 28.0]}
    ).to_parquet(p)  # fmt: skip
    t = load_measured(p)
    assert list(t["kernel"]) == ["3", ""]
    assert list(t["sweep_value"]) == ["14", "28"]
    assert list(t["run_id"]) == ["builtin:vecadd__mdm_pascal__k3", "builtin:vecadd__mdm_pascal"]


@pytest.mark.parametrize(
    ("cells", "match"),
    [("0,,", r"row 1: cycles must be a positive number, got '0'"),
     ("inf,,", r"row 1: cycles must be a positive number"),
     ("5,,1.5", r"row 1: l2_miss_rate must be a rate in \[0, 1\], got '1.5'"),
     ("5,-1,", r"row 1: kernel index -1 must be >= 0"),
     (",,", r"row 1: expected exactly one of cycles and time_us, got neither")],
)  # fmt: skip
def test_bad_cells_name_the_row(tmp_path: Path, cells: str, match: str) -> None:
    """Zero or infinite cycles, a rate above 1, a negative kernel index, no measurement."""
    p = _csv(tmp_path / "m.csv", f"trace,gpu,cycles,kernel,l2_miss_rate\nbuiltin:x,g,{cells}\n")
    with pytest.raises(ConfigError, match=match):
        load_measured(p)


def test_labels() -> None:
    """trace_label: builtin spec kept; folder of a kernelslist.g; stem of a .mdmtrace.
    gpu_label: folder of a gpgpusim.config, stem of a file, a preset name as is."""
    assert trace_label("a/b/kernelslist.g") == "b"
    assert trace_label("a/run.mdmtrace") == "run"
    assert trace_label("builtin:stride?gs=32") == "builtin:stride?gs=32"
    assert gpu_label("configs/SM7_QV100/gpgpusim.config") == "SM7_QV100"
    assert gpu_label("x/h100.yaml") == "h100"
    assert gpu_label("mdm_pascal") == "mdm_pascal"


def test_select_kernel_index_exact_name_then_function_name() -> None:
    """Index 1 of 2 kernels; index 2 is out of range. ``foo(float)`` is kernel 1 by its
    exact name although both kernels are function ``foo``; plain ``foo`` is ambiguous;
    ``bar`` is kernel 2 by its function name."""
    names = ["foo(int)", "foo(float)", "void ns::bar<4>(int)"]
    assert select_kernel(names, "1") == 1
    with pytest.raises(ValueError, match="kernel index 3 out of range"):
        select_kernel(names, "3")
    assert select_kernel(names, "foo(float)") == 1
    with pytest.raises(ValueError, match=r"matches kernels \[0, 1\]"):
        select_kernel(names, "foo")
    assert select_kernel(names, "bar") == 2
    with pytest.raises(ValueError, match="not in the trace"):
        select_kernel(names, "baz")


def test_gpu_paths_resolve_against_the_table(tmp_path: Path) -> None:
    """gpu cells: a name with a slash (cfgs/mine) is a path from the table's folder even
    when absent; a bare name that is no file there (mine) is kept for load_gpu; a file
    beside the table (here.yaml) resolves; a builtin trace spec is kept."""
    (tmp_path / "here.yaml").write_text("")
    p = _csv(
        tmp_path / "m.csv",
        "trace,gpu,cycles\nbuiltin:x,cfgs/mine,1\nbuiltin:x,mine,2\nbuiltin:x,here.yaml,3\n",
    )
    t = load_measured(p)
    assert list(t["gpu"]) == [str(tmp_path / "cfgs" / "mine"), "mine", str(tmp_path / "here.yaml")]
    assert list(t["trace"]) == ["builtin:x"] * 3


def test_the_first_bad_row_is_reported_with_the_count_of_others(tmp_path: Path) -> None:
    """Rows 1 and 2 select kernels 5 and 7 of a one-kernel trace: the error names row 1
    (the first) and says there is 1 more bad row."""
    from mdm.explore.measured import validate_measured

    p = _csv(
        tmp_path / "m.csv",
        "trace,gpu,kernel,cycles\n"
        "builtin:stride?ctas=4&gs=32,mdm_pascal,5,100\n"
        "builtin:stride?ctas=4&gs=32,mdm_pascal,7,100\n",
    )
    with pytest.raises(
        ConfigError, match=r"row 1: kernel index 5 out of range.*\(and 1 more bad row"
    ):
        validate_measured(p, ["mdm"], workers=1)


@pytest.mark.parametrize("stream", [False, True])
def test_a_kernel_after_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """A store of kernel 0 "empty" (no instructions: left out of the prediction) and
    kernel 1 "work". A row of kernel 1 is scored against kernel 1's prediction: the
    application's only predicted kernel, so its model cycles are the whole-app row's;
    its cache-simulation miss rates are kernel 1's, the same as the application's;
    a row of kernel 0 is an error naming it (no instructions). The same read one kernel
    at a time (``stream``: above STREAM_TRACE_BYTES)."""
    from mdm.explore import runner
    from mdm.explore.measured import validate_measured
    from mdm.profile.handmade import kernel_from_warps
    from mdm.traces.model import AppTrace
    from mdm.traces.model import InstrClass as C
    from mdm.traces.store import save_store

    empty = kernel_from_warps([[]], name="empty")
    work = kernel_from_warps(
        [[(C.LD_GLOBAL, [1], [0], [4 * i for i in range(32)]), (C.INT, [2], [1])]] * 2,
        name="work",
    )
    save_store(AppTrace(commands=[empty, work], name="app"), tmp_path / "app.mdmtrace")
    if stream:
        monkeypatch.setattr(runner, "STREAM_TRACE_BYTES", 0)
    p = _csv(
        tmp_path / "m.csv",
        "trace,gpu,kernel,cycles\napp.mdmtrace,mdm_pascal,1,100\napp.mdmtrace,mdm_pascal,,100\n",
    )
    res = validate_measured(p, ["mdm"], workers=1)
    runs = res.runs.set_index("run_id")
    assert runs.loc["app__mdm_pascal__k1", "kernel_name"] == "work"
    assert runs.loc["app__mdm_pascal__k1", "cycles"] == runs.loc["app__mdm_pascal", "cycles"]
    for col in ("cachesim_l1_miss_rate", "cachesim_l2_miss_rate"):  # kernel 1's: the app's
        assert runs.loc["app__mdm_pascal__k1", col] == runs.loc["app__mdm_pascal", col]
    assert list(res.kernels["kernel"]) == [1]
    bad = _csv(tmp_path / "b.csv", "trace,gpu,kernel,cycles\napp.mdmtrace,mdm_pascal,0,100\n")
    with pytest.raises(ConfigError, match=r"row 1: kernel 0 of .* has no instructions"):
        validate_measured(bad, ["mdm"], workers=1)
