"""YAML and JSON reading for configuration files and sweep specs: a key given twice in
one mapping is an error (PyYAML and ``json`` keep the last one silently; TOML already
refuses it), so that ``n_sm: 14`` then ``n_sm: 80`` cannot pass unnoticed."""

from __future__ import annotations

import json
from typing import Any

import yaml

__all__ = ["DuplicateKeyError", "json_loads", "yaml_load"]


class DuplicateKeyError(ValueError):
    """A JSON object gives one key twice."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader's own error follows
                break
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"found the key {key!r} a second time (first on line "
                    f"{first.start_mark.line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def yaml_load(text: str) -> Any:
    """``yaml.safe_load`` refusing duplicate keys (a ``yaml.YAMLError`` naming both lines)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKeyError(f"the key {k!r} is given twice in one object")
        out[k] = v
    return out


def json_loads(text: str) -> Any:
    """``json.loads`` refusing a key given twice in one object (:class:`DuplicateKeyError`)."""
    return json.loads(text, object_pairs_hook=_unique)
