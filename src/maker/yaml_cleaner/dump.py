"""maker's one YAML writer: block style, for people and models to read."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from maker.yaml_cleaner.frozen import FrozenDict, FrozenList

__all__ = ["canonical_sha256", "dump_yaml"]


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The safe dumper, which also writes read-only data (``frozen``) as plain."""


_Dumper.add_representer(FrozenDict, yaml.SafeDumper.represent_dict)
_Dumper.add_representer(FrozenList, yaml.SafeDumper.represent_list)


def dump_yaml(data: Any) -> str:
    """YAML for humans: block style, keys in the given order, unicode kept."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)


def canonical_sha256(data: Any) -> str:
    """sha256 of ``data`` as canonical YAML (sorted keys): what a later step saw (each
    handoff records it for the outputs it read; orient compares it with what is there)."""
    text = yaml.safe_dump(data, sort_keys=True, allow_unicode=True, default_flow_style=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
