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
