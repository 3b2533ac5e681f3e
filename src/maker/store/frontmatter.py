"""Markdown files with YAML front matter: read (with errors naming the file) and write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from maker.errors import PlanFileError, YAMLCleanError
from maker.yaml_cleaner.cleaner import load_yaml

__all__ = ["dump_yaml", "read_front_matter", "render_front_matter", "split_front_matter"]

_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data: Any) -> str:
    """YAML for humans: block style, keys in the given order, unicode kept."""
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)


def render_front_matter(meta: dict[str, Any], body: str) -> str:
    return f"---\n{dump_yaml(meta)}---\n\n{body.rstrip()}\n"


def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """``(meta, body)`` of a front-matter file; PlanFileError naming what is wrong."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise PlanFileError(path, "no YAML front matter",
                            fix="the file must start with a line `---`, the YAML fields, "
                                "then a line `---`")
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise PlanFileError(path, "the front matter is not closed",
                                fix="add a line `---` after the YAML fields")
    try:
        meta = load_yaml(text[4:end + 1])
    except YAMLCleanError as exc:
        raise PlanFileError(path, f"front matter: {exc}",
                            fix="repair the YAML between the `---` lines") from None
    if not isinstance(meta, dict):
        raise PlanFileError(path, "the front matter is not a mapping of fields",
                            fix="write `field: value` lines between the `---` lines")
    return meta, text[end + 5:]


def read_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PlanFileError(path, "not UTF-8 text", fix="save the file as UTF-8") from None
    except FileNotFoundError:
        raise PlanFileError(path, "missing") from None
    return split_front_matter(text, path)
