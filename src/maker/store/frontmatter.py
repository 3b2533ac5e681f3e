"""Markdown files with YAML front matter: read (with errors naming the file) and write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maker.core.bounded import read_text_file
from maker.errors import InputError, PlanFileError, YAMLCleanError
from maker.yaml_cleaner.dump import dump_yaml
from maker.yaml_cleaner.load import load_yaml

__all__ = ["read_front_matter", "render_front_matter", "split_front_matter"]

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
    """``(meta, body)`` of a regular file within maker's input limit; PlanFileError
    naming the file when it is missing, not a regular file, too large or broken."""
    try:
        text = read_text_file(path)
    except UnicodeDecodeError:
        raise PlanFileError(path, "not UTF-8 text", fix="save the file as UTF-8") from None
    except FileNotFoundError:
        raise PlanFileError(path, "missing") from None
    except InputError as exc:
        raise PlanFileError(path, str(exc).removeprefix(f"{path} "),
                            fix="replace it with the plan file it should be") from None
    except OSError as exc:
        raise PlanFileError(path, f"cannot read: {exc.strerror or exc}") from None
    return split_front_matter(text, path)
