"""maker's one YAML writer: block style, for people and models to read."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["dump_yaml"]

_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data: Any) -> str:
    """YAML for humans: block style, keys in the given order, unicode kept."""
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)
