"""``mdm config``: export round trips, differences, derived values, one-line warnings."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mdm.cli.common import show_mdm_warning
from mdm.cli.main import app
from mdm.config import import_accelsim, list_presets, load_gpu
from mdm.config.export import derived_values, diff_gpus, dumps_gpu, flat_fields, save_gpu
from mdm.errors import ConfigError, MdmWarning

runner = CliRunner()
REF_CONFIGS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "configs"


@pytest.mark.parametrize("fmt", [".toml", ".yaml", ".json"])
@pytest.mark.parametrize("preset", list_presets())
def test_every_preset_round_trips(preset: str, fmt: str, tmp_path: Path) -> None:
    gpu = load_gpu(preset)
    path = save_gpu(gpu, tmp_path / f"exported{fmt}", header=f"{preset}\n\nsecond line")
    assert load_gpu(path) == gpu  # every field, defaults and tuples included


def test_reference_configs_round_trip(tmp_path: Path) -> None:
    configs = sorted(REF_CONFIGS.glob("*/gpgpusim.config"))
    if not configs:
        pytest.skip(f"{REF_CONFIGS} not found")
    for cfg in configs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MdmWarning)
            gpu = import_accelsim(cfg)
        out = save_gpu(gpu, tmp_path / f"{cfg.parent.name}.toml")
        assert load_gpu(out) == gpu, cfg
        assert diff_gpus(load_gpu(out), gpu) == []


def test_exported_file_is_editable_toml(tmp_path: Path) -> None:
    """The exported TOML is a plain file: a user edits one value and the change loads."""
    path = save_gpu(load_gpu("mdm_pascal"), tmp_path / "mine.toml")
    text = path.read_text()
    assert "\nmshr_entries = 128\n" in text  # the [l1] table's, as in the preset
    path.write_text(text.replace("\nmshr_entries = 128\n", "\nmshr_entries = 64\n", 1))
    assert diff_gpus(load_gpu("mdm_pascal"), load_gpu(path)) == [("l1.mshr_entries", 128, 64)]


def test_none_fields_listed_in_comments_and_restored() -> None:
    """TOML has no null: an unset field is a comment with its meaning, after the values
    (YAML likewise), so the exported file shows every field; JSON writes ``null``."""
    gpu = load_gpu("gtx1080")  # l1.unified_bytes is None (fixed L1)
    unset = [k for k, v in flat_fields(gpu).items() if v is None]
    assert "l1.unified_bytes" in unset
    for fmt in (".toml", ".yaml"):
        values, marker, comments = dumps_gpu(gpu, fmt).partition("# Unset (None) fields")
        assert marker and "unified_bytes" not in values
        listed = [
            line[2:].split(": ")[0]
            for line in comments.splitlines()[1:]
            if line.startswith("# ") and not line.startswith("#  ")
        ]
        assert listed == unset, fmt
    assert json.loads(dumps_gpu(gpu, ".json"))["l1"]["unified_bytes"] is None
    gpu = gpu.with_updates({"l1.unified_bytes": 98304, "l1.shared_carveouts_bytes": [0, 49152]})
    assert "unified_bytes" not in dumps_gpu(gpu, ".toml").partition("# Unset")[2]


def test_bad_suffix_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\.toml"):
        save_gpu(load_gpu("mdm_pascal"), tmp_path / "x.ini")
    r = runner.invoke(app, ["config", "show", "mdm_pascal", "--out", str(tmp_path / "x.ini")])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert not (tmp_path / "x.ini").exists()


# Valid values of a few fields of mdm_pascal, for the property below.
_CHOICES = {
    "n_sm": [14, 28, 56, 80],
    "core_clock_mhz": [1000.0, 1400.0, 2000.0],
    "l1.mshr_entries": [32, 64, 128, 256],
    "l1.sectored": [False, True],
    "l2.banks": [12, 24, 48],
    "dram.bandwidth_gbps": [240.0, 480.0, 960.0],
    "noc.latency_ns": [0.0, 10.0],
    "sm.scheduler_policy": ["gto", "lrr"],
}


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(_CHOICES)), st.integers(0, 3), max_size=5))
def test_diff_names_exactly_the_changed_fields(picks: dict[str, int]) -> None:
    base = load_gpu("mdm_pascal")
    before = flat_fields(base)
    updates = {f: _CHOICES[f][i % len(_CHOICES[f])] for f, i in picks.items()}
    other = base.with_updates(updates)
    changed = {f for f, v in updates.items() if v != before[f]}
    diff = diff_gpus(base, other)
    assert {f for f, _, _ in diff} == changed
    assert all(a == before[f] and b == updates[f] for f, a, b in diff)
    assert diff_gpus(other, other) == []


def test_derived_values_by_hand() -> None:
    """mdm_pascal (paper 001 Table III): L2 round trip 120 cycles minus the 23-cycle L1
    pipeline, DRAM 220 cycles more, 480 GB/s at 1.4 GHz; 48 KB / (6 x 128 B) = 64 L1
    sets, 3 MB / (24 x 8 x 128 B) = 128 L2 sets per bank."""
    d = derived_values(load_gpu("mdm_pascal"))
    assert d["l2_hit_latency_cycles"] == pytest.approx(97.0)
    assert d["dram_latency_cycles"] == pytest.approx(220.0)
    assert d["dram_bytes_per_cycle"] == pytest.approx(480 / 1.4)
    assert d["l1_sets"] == 64 and d["l2_sets_per_bank"] == 128
    # 28 ports x 44.8 GB/s = 1254.4 > 1050: the total bandwidth binds
    assert d["noc_effective_gbps"] == pytest.approx(1050.0)


def test_cli_show_out_and_json(tmp_path: Path) -> None:
    out = tmp_path / "v100.yaml"
    r = runner.invoke(app, ["config", "show", "v100", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert load_gpu(out) == load_gpu("v100")
    r = runner.invoke(app, ["config", "show", "v100", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["config"]["l1"]["mshr_entries"] == 4096
    assert data["derived"]["l1_sets"] == 4
    r = runner.invoke(app, ["config", "show", "v100"])  # TOML text, then derived comments
    printed = tmp_path / "printed.toml"
    printed.write_text(r.output)
    assert load_gpu(printed) == load_gpu("v100")


def test_cli_list_and_diff() -> None:
    r = runner.invoke(app, ["config", "list", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [x["name"] for x in rows] == list_presets()
    assert all(x["n_sm"] == load_gpu(x["name"]).n_sm for x in rows)
    r = runner.invoke(app, ["config", "diff", "v100", "sm7_qv100", "--json"])
    data = json.loads(r.output)
    fields = {d["field"]: (d["a"], d["b"]) for d in data["differences"]}
    assert fields["l1.allocate_on"] == ("fill", "miss") and "n_sm" not in fields
    r = runner.invoke(app, ["config", "diff", "mdm_pascal", "mdm_pascal"])
    assert r.exit_code == 0 and "no differences" in r.output
    r = runner.invoke(app, ["config", "diff", "mdm_pascal", "nope"])
    assert r.exit_code == 1 and "unknown GPU preset" in r.output


def test_diff_ignores_float_rounding_and_labels_sides_as_given(tmp_path: Path) -> None:
    """Floats within a relative 1e-12 are equal (an imported latency computed in another
    order differed in its last digit); the table's columns are the arguments, since two
    files may carry one name."""
    base = load_gpu("mdm_pascal")
    lat = base.l2.hit_latency_ns
    near = base.with_updates({"l2.hit_latency_ns": lat * (1 + 1e-15)})
    assert near.l2.hit_latency_ns != lat and diff_gpus(base, near) == []
    far = base.with_updates({"l2.hit_latency_ns": lat * (1 + 1e-9)})
    assert [f for f, _, _ in diff_gpus(base, far)] == ["l2.hit_latency_ns"]
    a, b = save_gpu(base, tmp_path / "a.toml"), save_gpu(far, tmp_path / "b.toml")
    r = runner.invoke(app, ["config", "diff", str(a), str(b)], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and f"A ({a})" in r.output and f"B ({b})" in r.output


def test_cli_warning_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    show_mdm_warning(MdmWarning("cfg: 2 options not mapped: -a -b"), MdmWarning, "x.py", 1)
    assert capsys.readouterr().err == "warning: cfg: 2 options not mapped: -a -b\n"
    with pytest.warns(UserWarning, match="other"):  # others: Python's own display
        show_mdm_warning(UserWarning("other"), UserWarning, "x.py", 7)
    assert "warning: other" not in capsys.readouterr().err


def test_cli_prints_unmapped_options_in_one_line(tmp_path: Path) -> None:
    """End to end (pytest records warnings instead of showing them, hence a process)."""
    cfg = REF_CONFIGS / "mdm_pascal" / "gpgpusim.config"
    if not cfg.is_file():
        pytest.skip(f"{cfg} not found")
    out = tmp_path / "p.json"
    code = "from mdm.cli.main import app; app()"
    r = subprocess.run(
        [sys.executable, "-c", code, "config", "show", str(cfg), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {cfg}: ")
    assert "options not mapped: -" in lines[0]
    assert load_gpu(out).n_sm == 28


def test_settings_parse_toml_values_else_text() -> None:
    from mdm.config.load import parse_settings

    assert parse_settings(
        [
            "l1.mshr_entries=256",
            "core_clock_mhz = 1.5e3",
            "noc.fifo_crossbar=false",
            "sm.scheduler_policy=lrr",
            'name="my gpu"',
            "l2.sub_partition_bits=[7, 8]",
            "noc.sm_port_gbps=None",
            "l1.mshr_entries=64",  # a later setting of a field wins
        ]
    ) == {
        "l1.mshr_entries": 64,
        "core_clock_mhz": 1500.0,
        "noc.fifo_crossbar": False,
        "sm.scheduler_policy": "lrr",
        "name": "my gpu",
        "l2.sub_partition_bits": [7, 8],
        "noc.sm_port_gbps": None,
    }
    for bad in ("l1.mshr_entries", "=3", "l1.mshr_entries=", " = "):
        with pytest.raises(ConfigError, match="expected FIELD=VALUE"):
            parse_settings([bad])


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.integers(-(2**62), 2**62),
        st.floats(allow_nan=False, allow_infinity=False),
        st.booleans(),
        st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1).filter(
            lambda s: (
                s.lower() not in ("none", "true", "false", "inf", "nan") and not s[0].isdigit()
            )
        ),
    )
)
def test_settings_round_trip_scalar_values(value: object) -> None:
    """Any int, float, bool or bare word written as ``--set`` text reads back equal."""
    from mdm.config.load import parse_settings

    text = str(value).lower() if isinstance(value, bool) else repr(value)
    if isinstance(value, str):
        text = value  # a bare word: not TOML, kept as the text
    assert parse_settings([f"x.y={text}"]) == {"x.y": value}


def test_set_applies_fields_renames_and_names_bad_ones() -> None:
    from mdm.config import apply_settings

    base = load_gpu("mdm_pascal")
    assert apply_settings(base, []) is base
    gpu = apply_settings(base, ["l1.mshr_entries=256", "sm.scheduler_policy=lrr"])
    assert diff_gpus(base, gpu) == [
        ("name", "mdm_pascal", "mdm_pascal [l1.mshr_entries=256, sm.scheduler_policy=lrr]"),
        ("sm.scheduler_policy", "gto", "lrr"),
        ("l1.mshr_entries", 128, 256),
    ]
    assert apply_settings(base, ["name=mine", "n_sm=14"]).name == "mine"
    with pytest.raises(ConfigError, match=r"--set: unknown .*'l1\.mshrs'.*'l1\.mshr_entries'"):
        apply_settings(base, ["l1.mshrs=64"])
    with pytest.raises(ConfigError, match=r"--set: field 'l1\.mshr_entries'.*-3"):
        apply_settings(base, ["l1.mshr_entries=-3"])
    with pytest.raises(ConfigError, match="'gto' or 'lrr'"):
        apply_settings(base, ["sm.scheduler_policy=fifo"])


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("dotted.yaml", "base: mdm_pascal\nl1.mshr_entries: 64\nl1:\n  ways: 4\n"),
        ("dotted.toml", 'base = "mdm_pascal"\n"l1.mshr_entries" = 64\n[l1]\nways = 4\n'),
        ("dotted.json", '{"base": "mdm_pascal", "l1.mshr_entries": 64, "l1": {"ways": 4}}'),
    ],
)
def test_dotted_names_in_a_file_are_its_fields(name: str, text: str, tmp_path: Path) -> None:
    """A file may name a field dotted, as ``--set`` and sweep specs do, beside the
    tables; the same field given both ways, or a table under a value, is an error."""
    f = tmp_path / name
    f.write_text(text)
    want = [("l1.ways", 6, 4), ("l1.mshr_entries", 128, 64)]
    assert diff_gpus(load_gpu("mdm_pascal"), load_gpu(f))[1:] == want  # after the name
    f.write_text(text.replace("ways", "mshr_entries"))
    with pytest.raises(ConfigError, match=r"field 'l1\.mshr_entries' is given twice") as ei:
        load_gpu(f)
    assert str(ei.value).startswith(str(f))
    f = tmp_path / "value.json"
    f.write_text('{"base": "mdm_pascal", "n_sm": 3, "n_sm.x": 1}')
    with pytest.raises(ConfigError, match=r"'n_sm\.x': 'n_sm' is a value, not a table"):
        load_gpu(f)


def test_unknown_fields_get_the_closest_names(tmp_path: Path) -> None:
    """A misspelt field, in a file or an update, is named with the schema's closest
    fields; a leaf under the wrong section with the sections that have it."""
    from mdm.config.gpu import schema_fields

    names = schema_fields()
    assert "l1.mshr_entries" in names and "dram.channels" in names and "l1" not in names
    assert names == list(flat_fields(load_gpu("h100")))  # every field, in schema order
    f = tmp_path / "typo.toml"
    f.write_text('base = "mdm_pascal"\n[l1]\nmshrs = 64\n')
    with pytest.raises(
        ConfigError, match=r"'l1\.mshrs': unknown key; did you mean 'l1\.mshr_entries'"
    ):
        load_gpu(f)
    base = load_gpu("mdm_pascal")
    with pytest.raises(ConfigError, match=r"'n_sms'; did you mean 'n_sm'\?"):
        base.with_updates({"n_sms": 14})
    with pytest.raises(ConfigError, match=r"'sm\.mshr_entries'.*'l1\.mshr_entries'"):
        base.with_updates({"sm.mshr_entries": 14})
    with pytest.raises(ConfigError, match=r"field 'zzz\.qqq'$"):
        base.with_updates({"zzz.qqq": 1})


def test_config_show_with_set() -> None:
    r = runner.invoke(
        app, ["config", "show", "mdm_pascal", "--set", "l1.mshr_entries=32", "--json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["config"]["l1"]["mshr_entries"] == 32
    r = runner.invoke(app, ["config", "show", "mdm_pascal", "--set", "l1.mshr_entries=x"])
    assert r.exit_code == 1
    assert (
        r.output.startswith("error: --set: field 'l1.mshr_entries'") and "Traceback" not in r.output
    )


def test_config_show_warns_of_what_the_simulator_refuses() -> None:
    """A configuration the cache simulator cannot run (GPGPU-Sim's Fermi set hash needs
    32 or 64 sets) is shown and written, with a warning that predict will refuse it;
    errors about a derived mismatch name the fields to change with it."""
    with pytest.warns(MdmWarning, match="needs 32 or 64 sets, not 8; mdm predict"):
        r = runner.invoke(
            app,
            ["config", "show", "mdm_pascal", "--set", "l1.size_bytes=1024", "--set", "l1.ways=1"],
        )
    assert r.exit_code == 0, r.output
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert runner.invoke(app, ["config", "show", "mdm_pascal"]).exit_code == 0
    from mdm.memory.cachesim import check_supported

    with pytest.raises(ConfigError, match=r"64 / 1 = 64 sub-partitions.*l2.sub_partition_bits"):
        check_supported(load_gpu("sm7_qv100").with_updates({"dram.channels": 1}))
    with pytest.raises(ConfigError, match=r"l2.fetch_bytes=64 must be a whole number of the line"):
        load_gpu("h100").with_updates({"l2.sectored": False})


def test_array_sizing_counts_are_bounded_and_out_of_memory_is_one_line(capsys) -> None:  # noqa: ANN001
    """Counts that size the cache simulator's arrays have upper bounds (a typo such as
    ``l1.mshr_entries=99999999999`` asked numpy for 20 TiB and died with a traceback), and
    any allocation failure under the CLI is one line."""
    import typer

    from mdm.cli.common import cli_errors

    base = load_gpu("mdm_pascal")
    for field in ("l1.mshr_entries", "l1.miss_queue_entries", "l2.mshr_per_bank"):
        with pytest.raises(ConfigError, match=rf"field '{re.escape(field)}'.*less than or equal"):
            base.with_updates({field: 99_999_999_999})
    assert base.with_updates({"l1.mshr_entries": 8192}).l1.mshr_entries == 8192  # h100's
    with pytest.raises(typer.Exit), cli_errors():
        raise MemoryError("Unable to allocate 5.82 TiB for an array")
    assert (
        capsys.readouterr().err
        == "error: out of memory: Unable to allocate 5.82 TiB for an array\n"
    )
