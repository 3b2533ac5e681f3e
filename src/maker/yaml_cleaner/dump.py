"""maker's one YAML writer: block style, for people and models to read."""

from __future__ import annotations

from typing import Any

import yaml

from maker.yaml_cleaner.frozen import FrozenDict, FrozenList

__all__ = ["dump_yaml"]


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The safe dumper, which also writes read-only data (``frozen``) as plain."""


_Dumper.add_representer(FrozenDict, yaml.SafeDumper.represent_dict)
_Dumper.add_representer(FrozenList, yaml.SafeDumper.represent_list)


def dump_yaml(data: Any) -> str:
    """YAML for humans: block style, keys in the given order, unicode kept."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)
