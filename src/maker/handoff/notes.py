"""``plans/NOTES.md``: the durable facts steps leave for later steps (seed 002).

A readable Markdown file with one section per kind of fact::

    # Notes
    ...
    ## Discoveries
    - The API client retries on 429 already. (step 2)
    ## Decisions
    ...
    ## Blockers
    ...

Humans may edit it: other sections, free text and reordered bullets are kept as
they are. A fact already present (ignoring case, spacing, punctuation at the end
and the ``(step N)`` tag) is not added again. Each section keeps its newest
``keep`` bullets; older ones are appended to ``plans/archive/NOTES-<section>.md``,
so nothing is lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from maker.core.bounded import read_text_file
from maker.store.atomic import atomic_write

__all__ = ["DEFAULT_KEEP", "MAX_ENTRY_CHARS", "SECTIONS", "add_notes", "fact_key", "read_notes"]

SECTIONS: dict[str, str] = {"discoveries": "Discoveries", "decisions": "Decisions",
                            "blockers": "Blockers"}
DEFAULT_KEEP = 40
MAX_ENTRY_CHARS = 600  # the full text stays in the step's handoff file

_HEADER = ("# Notes\n\n"
           "Durable facts the steps of this plan left for the steps after them. maker adds "
           "the discoveries, decisions and blockers of every accepted handoff; edit freely.\n")
_BULLET = re.compile(r"^[-*+] +")
_STEP_TAG = re.compile(r"\s*_?\((?:steps?|from step) [\d, ]+\)_?\s*$", re.IGNORECASE)


@dataclass
class _Section:
    title: str
    # Each block is a bullet entry (its lines) or one other line (kept verbatim).
    blocks: list[tuple[bool, list[str]]] = field(default_factory=list)

    def entries(self) -> list[list[str]]:
        return [lines for is_entry, lines in self.blocks if is_entry]


def fact_key(text: str) -> str:
    """How two facts are compared: no bullet, tag, case, spacing or final punctuation."""
    text = _BULLET.sub("", text.strip())
    text = _STEP_TAG.sub("", text)
    return re.sub(r"\s+", " ", text).strip().rstrip(".;!").strip().casefold()


def _parse(text: str) -> tuple[list[str], list[_Section]]:
    preamble: list[str] = []
    sections: list[_Section] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("## "):
            sections.append(_Section(line[3:].strip()))
            continue
        if not sections:
            preamble.append(line)
            continue
        blocks = sections[-1].blocks
        if _BULLET.match(line):
            blocks.append((True, [line]))
        elif line[:1] in (" ", "\t") and line.strip() and blocks and blocks[-1][0]:
            blocks[-1][1].append(line)  # continuation of the bullet above
        else:
            blocks.append((False, [line]))
    return preamble, sections


def _render(preamble: list[str], sections: list[_Section]) -> str:
    lines = list(preamble)
    while lines and not lines[-1].strip():
        lines.pop()
    for section in sections:
        lines += ["", f"## {section.title}"]
        body = [ln for _, block in section.blocks for ln in block]
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        if body:
            lines += [""] + body
    return "\n".join(lines).strip("\n") + "\n"


def _tagged(first: str, rest: list[str], tag: str) -> list[str]:
    body = [f"- {first}"] + [f"  {ln.strip()}" for ln in rest if ln.strip()]
    body[-1] += tag
    return body


def _find(sections: list[_Section], title: str) -> _Section | None:
    for section in sections:
        if section.title.casefold() == title.casefold():
            return section
    return None


def read_notes(path: Path) -> dict[str, list[str]]:
    """Section title → its bullet entries' texts (bullet marker removed); {} if no file."""
    try:
        text = read_text_file(path, errors="replace")
    except FileNotFoundError:
        return {}
    _, sections = _parse(text)
    return {s.title: [_BULLET.sub("", "\n".join(e)).strip() for e in s.entries()]
            for s in sections}


def add_notes(path: Path, facts: Mapping[str, Iterable[str]], step: int | None = None,
              archive_dir: Path | None = None, keep: int = DEFAULT_KEEP) -> int:
    """Add new facts to NOTES.md and return how many were added.

    ``facts`` maps a kind (``discoveries``, ``decisions``, ``blockers``, or any
    section title) to texts. Duplicates of facts already in their section are
    skipped. Sections over ``keep`` bullets move their oldest bullets to
    ``archive_dir/NOTES-<section>.md`` (default: ``plans/archive`` beside NOTES.md).
    The caller holds the plan lock.
    """
    try:
        text = read_text_file(path, errors="replace")
    except FileNotFoundError:
        text = _HEADER
    preamble, sections = _parse(text)
    added = 0
    for kind, texts in facts.items():
        title = SECTIONS.get(kind, kind)
        section = _find(sections, title)
        seen = {fact_key("\n".join(e)) for e in section.entries()} if section else set()
        new: list[list[str]] = []
        for fact in texts:
            key = fact_key(str(fact))
            if not key or key in seen:
                continue
            seen.add(key)
            new.append(_tagged(*_split(str(fact)), f" (step {step})" if step is not None
                               else ""))
        if not new:
            continue
        if section is None:
            section = _Section(title)
            sections.append(section)
        _append(section, new)
        added += len(new)
    if not added:
        return 0
    archive_dir = archive_dir or path.parent / "archive"
    for section in sections:
        old = _trim(section, keep)
        if old:
            _archive(archive_dir / f"NOTES-{_slug(section.title)}.md", section.title, old)
    atomic_write(path, _render(preamble, sections))
    return added


def _split(fact: str) -> tuple[str, list[str]]:
    text = fact.strip()
    if len(text) > MAX_ENTRY_CHARS:
        text = text[:MAX_ENTRY_CHARS].rstrip() + " …"
    first, *rest = text.split("\n")
    return first, rest


def _append(section: _Section, new: list[list[str]]) -> None:
    """Put new bullets after the section's last bullet (before trailing free text)."""
    last = max((i for i, (is_entry, _) in enumerate(section.blocks) if is_entry), default=-1)
    at = last + 1 if last >= 0 else len(section.blocks)
    if last < 0:  # keep a blank line between the heading's own text and the bullets
        while at and not section.blocks[at - 1][1][0].strip():
            at -= 1
        if at:
            section.blocks.insert(at, (False, [""]))
            at += 1
    section.blocks[at:at] = [(True, lines) for lines in new]


def _trim(section: _Section, keep: int) -> list[list[str]]:
    entries = [i for i, (is_entry, _) in enumerate(section.blocks) if is_entry]
    drop = set(entries[:max(0, len(entries) - keep)])
    old = [section.blocks[i][1] for i in sorted(drop)]
    section.blocks = [b for i, b in enumerate(section.blocks) if i not in drop]
    return old


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-") or "section"


def _archive(path: Path, title: str, entries: list[list[str]]) -> None:
    try:
        text = read_text_file(path, errors="replace")
    except FileNotFoundError:
        text = (f"# {title}: archived notes\n\nOlder entries moved out of NOTES.md to keep it "
                "short, oldest first.\n\n")
    if not text.endswith("\n"):
        text += "\n"
    text += "".join("\n".join(e) + "\n" for e in entries)
    atomic_write(path, text)
