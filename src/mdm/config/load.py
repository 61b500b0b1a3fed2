"""Load a :class:`GPUConfig` from a preset name, a TOML / YAML / JSON file or an Accel-Sim config.

A file may start from another configuration with ``base = "<preset name or path>"``
(a relative path is relative to the file) and override any field, Accel-Sim style
("base config + named deltas"): tables are merged key by key, other values replaced.
Without its own ``name`` a derived file is named after its stem. Unknown keys and
out-of-range values raise :class:`ConfigError` naming the file and the dotted field.
"""

from __future__ import annotations

import json
import tomllib
import warnings
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mdm._yaml import DuplicateKeyError, json_loads, yaml_load
from mdm.config.accelsim import LOG_SUFFIXES, import_accelsim, import_accelsim_log
from mdm.config.gpu import GPUConfig, translate_validation_error
from mdm.errors import ConfigError, MdmWarning

__all__ = [
    "apply_settings",
    "is_preset",
    "list_presets",
    "load_gpu",
    "load_gpu_dict",
    "parse_settings",
]

_SUFFIXES = {".toml", ".yaml", ".yml", ".json"}


def list_presets() -> list[str]:
    """Names of the built-in presets (``src/mdm/config/presets/*.toml``), sorted."""
    folder = resources.files("mdm.config") / "presets"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_gpu(preset_or_path: str | Path) -> GPUConfig:
    """A validated :class:`GPUConfig` from a preset name or a file path.

    ``.toml`` / ``.yaml`` / ``.yml`` / ``.json`` files use the schema's nested keys;
    a ``gpgpusim.config`` file (or a folder holding one) goes through
    :func:`mdm.config.accelsim.import_accelsim`, an Accel-Sim output log (``.log``,
    ``.log.xz``, ``.log.gz``) through :func:`mdm.config.accelsim.import_accelsim_log`
    (the configuration that run used, from its option dump).
    """
    if not str(preset_or_path).strip():
        raise ConfigError(None, "no GPU given (--gpu ''): expected a preset name or a file")
    path = Path(preset_or_path)
    if is_preset(str(preset_or_path)):  # a bare preset name, even beside a folder of it
        if (path / "gpgpusim.config").is_file():
            warnings.warn(
                MdmWarning(
                    f"{path!s} names a preset and a folder with a gpgpusim.config here; the "
                    f"preset is used (./{path!s} for the folder)"
                ),
                stacklevel=2,
            )
        data, source = load_gpu_dict(str(preset_or_path))
        return _validated(data, source)
    if path.is_dir() or path.name == "gpgpusim.config" or path.suffix == ".config":
        return import_accelsim(path)
    if path.name.endswith(LOG_SUFFIXES):
        return import_accelsim_log(path)
    data, source = load_gpu_dict(preset_or_path)
    return _validated(data, source)


def _validated(data: dict[str, Any], source: str) -> GPUConfig:
    try:
        return GPUConfig.model_validate(data)
    except ValidationError as exc:
        raise translate_validation_error(exc, source) from None


def is_preset(name: str) -> bool:
    """Whether ``name`` is a built-in preset's name (no path separator)."""
    return "/" not in name and _preset_file(name).is_file()


def _preset_file(name: str) -> Any:
    """The packaged TOML of preset ``name`` (an importlib resource)."""
    return resources.files("mdm.config") / "presets" / f"{name}.toml"


def parse_settings(items: Sequence[str]) -> dict[str, Any]:
    """``["l1.mshr_entries=256", "sm.scheduler_policy=lrr"]`` (the CLI's ``--set``) as
    ``{"l1.mshr_entries": 256, "sm.scheduler_policy": "lrr"}``.

    A value is read as a TOML value (``256``, ``1.5``, ``true``, ``"x"``, ``[7, 8]``);
    one that is not valid TOML is the text itself (``lrr``); ``none`` is ``None`` (the
    optional fields' default). A later setting of the same field wins. An item without
    ``FIELD=`` or without a value raises :class:`ConfigError` naming it.
    """
    out: dict[str, Any] = {}
    for item in items:
        field, eq, text = item.partition("=")
        field, text = field.strip(), text.strip()
        if not eq or not field or not text:
            raise ConfigError(
                None, f"--set {item!r}: expected FIELD=VALUE, e.g. l1.mshr_entries=256"
            )
        if text.lower() == "none":
            out[field] = None
            continue
        try:
            out[field] = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            out[field] = text
    return out


def apply_settings(gpu: GPUConfig, items: Sequence[str]) -> GPUConfig:
    """``gpu`` with the ``--set FIELD=VALUE`` items applied (:func:`parse_settings`,
    :meth:`GPUConfig.with_updates`), renamed ``"NAME [FIELD=VALUE, ...]"`` unless an
    item sets ``name``; ``gpu`` itself when there are none. Unknown fields and invalid
    values raise :class:`ConfigError` naming the field (with the closest field names)."""
    updates = parse_settings(items)
    if not updates:
        return gpu
    if "name" not in updates:
        what = ", ".join(f"{k}={v}" for k, v in updates.items())
        updates["name"] = f"{gpu.name} [{what}]"
    try:
        return gpu.with_updates(updates)
    except ConfigError as exc:
        raise ConfigError(None, f"--set: {exc.message}") from None


def load_gpu_dict(preset_or_path: str | Path, _seen: tuple[str, ...] = ()) -> tuple[dict, str]:
    """The raw (unvalidated, ``base`` resolved) mapping of a preset or file, and its source."""
    text, source, fmt, folder = _read(preset_or_path, _seen[-1] if _seen else None)
    if source in _seen:
        raise ConfigError(source, f"circular 'base' chain: {' -> '.join((*_seen, source))}")
    data = _parse(text, source, fmt)
    base = data.pop("base", None)
    if base is None:
        return data, source
    if not isinstance(base, str):
        raise ConfigError(source, f"field 'base': expected a preset name or path, got {base!r}")
    ref: str | Path = base
    if folder is not None and Path(base).suffix in _SUFFIXES:
        ref = folder / base
    base_data, _ = load_gpu_dict(ref, (*_seen, source))
    merged = _merge(base_data, data)
    if "name" not in data:
        merged["name"] = Path(source).stem
    return merged, source


def _read(
    preset_or_path: str | Path, base_of: str | None = None
) -> tuple[str, str, str, Path | None]:
    """Text, source, format and folder of a preset or file (``base_of``: the file whose
    ``base`` names it)."""
    path = Path(preset_or_path)
    if path.suffix in _SUFFIXES:
        if not path.is_file():
            if base_of is not None:
                raise ConfigError(base_of, f"field 'base': configuration file {path} not found")
            raise ConfigError(path, "configuration file not found")
        fmt = {".yml": ".yaml"}.get(path.suffix, path.suffix)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                path, f"expected UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
        return text, str(path), fmt, path.parent
    name = str(preset_or_path)
    if not is_preset(name):
        presets = f"presets are {', '.join(list_presets())}"
        if base_of is not None:
            raise ConfigError(
                base_of,
                f"field 'base': unknown GPU preset or file {name!r}: {presets}; a base file "
                "must end in .toml, .yaml, .yml or .json",
            )
        raise ConfigError(
            None,
            f"unknown GPU preset or file {name!r}: {presets}; files must end in .toml, "
            ".yaml, .yml or .json, or be a gpgpusim.config (or a folder holding one) or "
            f"an Accel-Sim log ({', '.join(LOG_SUFFIXES)})",
        )
    res = _preset_file(name)
    return res.read_text(), f"preset {name} ({res})", ".toml", None


_READERS: dict[str, tuple[str, Any]] = {
    ".toml": ("TOML", tomllib.loads),
    ".yaml": ("YAML", yaml_load),
    ".json": ("JSON", json_loads),
}


def _reads_as(text: str, fmt: str) -> str:
    """A hint naming the other format in which ``text`` is a mapping (e.g. ``mdm config
    show``'s TOML saved as ``.yaml``), or ``""``. Not for an empty text (TOML reads it as
    an empty table), nor YAML for a JSON file written as JSON (YAML reads JSON's typos,
    such as a trailing comma, too)."""
    if not text.strip():
        return ""
    json_like = text.lstrip().startswith(("{", "["))
    for other in (".json", ".toml", ".yaml"):  # strictest first: YAML reads JSON too
        if other == fmt or (fmt == ".json" and other == ".yaml" and json_like):
            continue
        name, read = _READERS[other]
        try:
            if isinstance(read(text), dict):
                return f" (the file reads as {name}: name it *{other})"
        except Exception:  # noqa: BLE001  (any parser's error: not that format)
            continue
    return ""


def _parse(text: str, source: str, fmt: str) -> dict[str, Any]:
    if not text.strip():
        raise ConfigError(source, "the file is empty: expected configuration fields")
    try:
        data = _READERS[fmt][1](text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, f"invalid TOML: {exc}{_reads_as(text, fmt)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, f"invalid YAML: {exc}{_reads_as(text, fmt)}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            source, f"line {exc.lineno}: invalid JSON: {exc.msg}{_reads_as(text, fmt)}"
        ) from None
    except DuplicateKeyError as exc:
        raise ConfigError(source, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(
            source,
            "expected a mapping of configuration fields at the top level" + _reads_as(text, fmt),
        )
    return _nest_dotted(data, source)


def _nest_dotted(data: dict[str, Any], source: str) -> dict[str, Any]:
    """``{"l1.mshr_entries": 64}`` (a dotted name as ``--set`` and sweep specs write it:
    a quoted TOML key, a YAML or JSON key) as ``{"l1": {"mshr_entries": 64}}``; a field
    given both ways is an error."""
    if not any(isinstance(k, str) and "." in k for k in data):
        return data
    out: dict[str, Any] = {}

    def put(node: dict[str, Any], path: list[str], value: Any, name: str) -> None:
        head, *rest = path
        if rest:
            if not isinstance(node.setdefault(head, {}), dict):
                raise ConfigError(source, f"field {name!r}: {head!r} is a value, not a table")
            put(node[head], rest, value, name)
        elif isinstance(value, dict) and isinstance(node.get(head), dict):
            for k, v in value.items():  # a table and dotted names into it
                put(node[head], [k], v, f"{name}.{k}")
        elif head in node:
            raise ConfigError(source, f"field {name!r} is given twice")
        else:
            node[head] = value

    for key, value in data.items():
        put(out, key.split(".") if isinstance(key, str) else [key], value, str(key))
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out
