from pathlib import Path

import pytest
from pydantic import ValidationError

from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError
from mdm.models.synthetic import pascal_like

BASE = pascal_like("t")


def test_derived_cycles_follow_core_clock():
    cfg = GPUConfig.model_validate(BASE)
    assert cfg.l1.sets == 64
    assert cfg.l2.sets_per_bank == 128
    assert cfg.dram_latency_cycles == pytest.approx(220)
    slow = cfg.with_updates({"core_clock_mhz": 700})
    assert slow.dram_latency_cycles == pytest.approx(110)
    assert slow.noc_bytes_per_cycle == pytest.approx(1500)


def test_unknown_and_out_of_range_fields_are_rejected():
    with pytest.raises(ValidationError, match="mshr_entrys"):
        GPUConfig.model_validate({**BASE, "l1": {**BASE["l1"], "mshr_entrys": 3}})
    with pytest.raises(ValidationError, match="n_sm"):
        GPUConfig.model_validate({**BASE, "n_sm": 0})
    with pytest.raises(ValidationError, match="multiple of ways"):
        GPUConfig.model_validate({**BASE, "l1": {**BASE["l1"], "size_bytes": 50000}})
    with pytest.raises(ConfigError, match="l1.nope"):
        GPUConfig.model_validate(BASE).with_updates({"l1.nope": 1})
    with pytest.raises(ConfigError, match="'l1.mshr_entries'"):
        GPUConfig.model_validate(BASE).with_updates({"l1.mshr_entries": 0})


def test_a_file_written_from_scratch_is_pointed_to_base(tmp_path):
    """Many required fields missing: the error adds a hint to start from a preset; one
    field missing (a typo in a derived file) gives no hint."""
    from mdm.config import load_gpu

    scratch = tmp_path / "mine.toml"
    scratch.write_text("[l1]\nways = 4\n")
    with pytest.raises(ConfigError, match=r"mine.toml.*'n_sm': required.*hint: .*base = "):
        load_gpu(scratch)
    derived = tmp_path / "derived.toml"
    derived.write_text('base = "mdm_pascal"\n[l1]\nwayz = 4\n')
    with pytest.raises(ConfigError) as err:
        load_gpu(derived)
    assert "'l1.wayz': unknown key" in str(err.value) and "hint" not in str(err.value)


@pytest.mark.parametrize(
    ("written", "named", "hint"),
    [
        (".toml", ".yaml", "reads as TOML: name it *.toml"),
        (".toml", ".json", "reads as TOML: name it *.toml"),
        (".json", ".toml", "reads as JSON: name it *.json"),
        (".yaml", ".toml", "reads as YAML: name it *.yaml"),
        (".yaml", ".json", "reads as YAML: name it *.yaml"),
    ],
)
def test_config_in_another_format_names_it(
    written: str, named: str, hint: str, tmp_path: Path
) -> None:
    """A configuration saved under another format's suffix (``mdm config show``'s TOML
    redirected into ``my.yaml``) is an error naming the file and the format it reads as;
    under its own suffix it loads."""
    from mdm.config import load_gpu
    from mdm.config.export import dumps_gpu

    gpu = load_gpu("h100")
    text = dumps_gpu(gpu, written)
    (tmp_path / f"own{written}").write_text(text)
    assert load_gpu(str(tmp_path / f"own{written}")) == gpu
    path = tmp_path / f"gpu{named}"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_gpu(str(path))
    assert str(path) in str(err.value) and hint in str(err.value)
    path.write_text("n_sm: [")  # no format at all: no hint
    with pytest.raises(ConfigError) as err:
        load_gpu(str(path))
    assert "reads as" not in str(err.value)


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("dup.yaml", "base: mdm_pascal\nn_sm: 14\nn_sm: 80\n", "'n_sm' a second time"),
        (
            "dup.json",
            '{"base": "mdm_pascal", "l1": {"ways": 4, "ways": 8}}',
            "'ways' is given twice",
        ),
        ("empty.yaml", "", "the file is empty"),
        ("empty.toml", "\n", "the file is empty"),
        ("comma.json", '{"base": "mdm_pascal",}', "invalid JSON"),
    ],
)
def test_duplicate_keys_and_empty_files_are_errors(
    name: str, text: str, error: str, tmp_path: Path
) -> None:
    """A key given twice (PyYAML and json keep the last one silently; TOML refuses it
    already) and an empty file are errors naming the file; no format hint is offered for
    an empty file (TOML reads it as an empty table) nor YAML for a JSON typo."""
    from mdm.config import load_gpu

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=error) as err:
        load_gpu(str(path))
    assert str(err.value).startswith(str(path)) and "reads as" not in str(err.value)


def test_l1_size_on_an_adaptive_carveout_warns_that_it_sets_only_the_sets():
    """On a unified L1/shared array (v100) a kernel's L1 capacity is ``unified_bytes``
    minus its carve-out: ``--set l1.size_bytes`` alone changes the sets, not the
    capacity (QA: a sweep over it was flat), so it warns and says what to set."""
    import warnings

    from mdm.config import load_gpu
    from mdm.errors import MdmWarning

    v100 = load_gpu("v100")
    with pytest.warns(MdmWarning, match="changes only the number of L1 sets"):
        bigger = v100.with_updates({"l1.size_bytes": 4 * v100.l1.size_bytes})
    assert bigger.l1.sets == 4 * v100.l1.sets
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v100.with_updates({"l1.size_bytes": 2 * v100.l1.size_bytes, "l1.unified_bytes": None})
        v100.with_updates({"l1": {"unified_bytes": 262144}})
        fixed = GPUConfig.model_validate(BASE)
        fixed.with_updates({"l1.size_bytes": 2 * fixed.l1.size_bytes})


def test_schema_bounds_at_their_edges():
    """Each bound at its edge: the last valid value passes, the first invalid one is
    refused, naming the field (an off-by-one in a bound would pass or refuse one more)."""
    cfg = GPUConfig.model_validate(BASE)
    for bad in ({"core_clock_mhz": 0}, {"l2.hit_latency_ns": 0}, {"dram.latency_ns": 0}):
        with pytest.raises(ConfigError, match=repr(next(iter(bad)))):
            cfg.with_updates(bad)
    assert cfg.with_updates({"l2.sub_partition_bits": (7, 62)}).l2.sub_partition_bits == (7, 62)
    for bits in ((7, 63), (8, 7), (7, 7), (-1,)):
        with pytest.raises(ConfigError, match="increasing bit positions in 0..62"):
            cfg.with_updates({"l2.sub_partition_bits": bits})
    # a sectored L2's fetch: whole sectors that divide the 128 B line
    sect = cfg.with_updates({"l2.sectored": True, "l2.sector_bytes": 32})
    assert sect.with_updates({"l2.fetch_bytes": 64}).l2_fetch_sectors == 2
    for fetch in (96, 48, 256):  # 96 and 256 do not divide 128; 48 is not whole sectors
        with pytest.raises(ConfigError, match="l2.fetch_bytes"):
            sect.with_updates({"l2.fetch_bytes": fetch})


def test_adaptive_carveout_bounds_and_an_unknown_section():
    """The largest carve-out must stay below the unified array and the array must hold
    whole sets; a field under a section that does not exist is named, not a KeyError;
    setting the unified size with the L1 size does not warn."""
    import warnings

    from mdm.config import load_gpu

    v100 = load_gpu("v100")
    u, opts = v100.l1.unified_bytes, v100.l1.shared_carveouts_bytes
    assert u is not None and opts
    with pytest.raises(ConfigError, match="below l1.unified_bytes"):
        v100.with_updates({"l1.shared_carveouts_bytes": (*opts[:-1], u)})
    ok = v100.with_updates({"l1.shared_carveouts_bytes": (*opts[:-1], u - 1024)})
    assert ok.l1.shared_carveouts_bytes[-1] == u - 1024
    step = v100.l1.sets * v100.l1.line_bytes
    with pytest.raises(ConfigError, match="not a multiple of sets"):
        v100.with_updates({"l1.unified_bytes": u + step // 2})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v100.with_updates({"l1.size_bytes": 2 * v100.l1.size_bytes, "l1.unified_bytes": 2 * u})
    for path in ("l9.ways", "l1.ways.x", "nosuch"):
        with pytest.raises(ConfigError, match=rf"unknown configuration field '{path}'"):
            v100.with_updates({path: 1})


def test_l1_request_size_and_line_geometry():
    """One L1 request (and MSHR entry) moves a sector of a sectored L1, else a line; a
    line of 96 B (whole sectors, sizes that divide) is still refused: not a power of two."""
    cfg = GPUConfig.model_validate(BASE)
    assert cfg.l1.request_bytes == cfg.l1.line_bytes == 128
    assert cfg.with_updates({"l1.sectored": True}).l1.request_bytes == cfg.l1.sector_bytes == 32
    with pytest.raises(ConfigError, match="line_bytes 96 must be a power of two"):
        cfg.with_updates({"l1.line_bytes": 96, "l1.ways": 4, "l1.size_bytes": 96 * 4 * 64})
