"""``plans/NOTES.md``: the durable facts steps leave for later steps (seed 002,
docs/architecture.md#the-seeds).

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
and the ``(step N, attempt A)`` tag) is not added again. Each section keeps its newest
``keep`` bullets of each scope (a component, or the plan as a whole:
``maker.store.fact_scope``), so a busy component never pushes a quiet one's facts out;
older ones are appended to ``plans/archive/NOTES-<section>.md``, so nothing is lost.

Facts belong to the plan and the attempt that found them. The file names its plan
(``Plan: <PLAN.md's created_at>``) and each fact its step and attempt. When a step is
reset, ``retire_attempt`` moves that attempt's blockers and decisions to "Earlier
attempts (reset)", each labelled so; a new plan starts from ``notes_for_new_plan``,
which keeps the old plan's discoveries only under "From the previous plan". Notes
that name another plan are shown as such (``read_notes(..., plan=...)``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from maker.core.bounded import read_text_file
from maker.store.atomic import atomic_write
from maker.store.fact_scope import PLAN_WIDE_MARK, RETIRED_LABEL, fact_scope, scoped_keep
from maker.store.slug import slugify

__all__ = ["DEFAULT_KEEP", "EARLIER_ATTEMPTS", "MAX_ENTRY_CHARS", "PREVIOUS_PLAN", "SECTIONS",
           "add_notes", "fact_key", "notes_for_new_plan", "notes_plan", "read_notes",
           "retire_attempt"]

SECTIONS: dict[str, str] = {"discoveries": "Discoveries", "decisions": "Decisions",
                            "blockers": "Blockers"}
DEFAULT_KEEP = 40
MAX_ENTRY_CHARS = 600  # the full text stays in the step's handoff file

_HEADER = ("# Notes\n\n"
           "Durable facts the steps of this plan left for the steps after them. maker adds "
           "the discoveries, decisions and blockers of every accepted handoff; edit freely.\n"
           "\nA step with a `component` is shown the facts of its component's steps, of the "
           "steps it depends on, and the plan-wide ones: those with no `(step N)` tag, those "
           f"of steps with no component, and those that begin `{PLAN_WIDE_MARK}`.\n")
EARLIER_ATTEMPTS = "Earlier attempts (reset)"
PREVIOUS_PLAN = "From the previous plan"
_BULLET = re.compile(r"^[-*+] +")
_STEP_TAG = re.compile(r"\s*_?\((?:steps?|from step) [\d, ]+(?:,? *attempt \d+)?\)_?\s*$",
                       re.IGNORECASE)
# ``(step 3)`` or ``(step 3, attempt 2)`` at the end of a bullet's last line.
_TAG_PARTS = re.compile(r"\(step (\d+)(?:, attempt (\d+))?\)_?\s*$", re.IGNORECASE)
_PLAN_LINE = re.compile(r"^Plan: (\S+)\s*$", re.MULTILINE)


def _header(plan: str | None) -> str:
    return _HEADER + (f"\nPlan: {plan}\n" if plan else "")


def notes_plan(text: str) -> str | None:
    """The plan (PLAN.md's ``created_at``) a NOTES.md text names, or None."""
    preamble = text.split("\n## ", 1)[0]
    m = _PLAN_LINE.search(preamble)
    return m.group(1) if m else None


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


def read_notes(path: Path, plan: str | None = None,
               attempts: Mapping[int, int] | None = None) -> dict[str, list[str]]:
    """Section title → its bullet entries' texts (bullet marker removed); {} if no file.

    With ``plan`` (the current PLAN.md's ``created_at``), notes that name another plan
    come back under "From the previous plan: <section>", never as this plan's facts.
    ``attempts`` maps a step to its current attempt: the blockers and decisions of its
    earlier (reset) attempts come back under "Earlier attempts (reset)", labelled.
    """
    try:
        text = read_text_file(path, errors="replace")
    except FileNotFoundError:
        return {}
    for step, current in (attempts or {}).items():
        for earlier in range(1, current):
            text = retire_attempt(text, step, earlier)
    _, sections = _parse(text)
    owner = notes_plan(text)
    foreign = plan is not None and owner is not None and owner != plan
    return {(f"{PREVIOUS_PLAN}: {s.title}" if foreign and not s.title.startswith(PREVIOUS_PLAN)
             else s.title): [_BULLET.sub("", "\n".join(e)).strip() for e in s.entries()]
            for s in sections}


def notes_for_new_plan(old_text: str, plan: str | None = None,
                       keep: int = DEFAULT_KEEP) -> str:
    """The NOTES.md a new plan starts with, given the old plan's NOTES.md text.

    The old plan's blockers and decisions belong to it and are dropped (the store
    archives the old file whole); its discoveries, facts about the project that may
    still hold, are kept under "From the previous plan", labelled so, newest ``keep``.
    ``plan`` is the new PLAN.md's ``created_at``.
    """
    _, sections = _parse(old_text)
    found = _find(sections, SECTIONS["discoveries"])
    entries = found.entries()[-keep:] if found else []
    text = _header(plan)
    if entries:
        text += (f"\n## {PREVIOUS_PLAN}\n\nDiscoveries of the plan before this one: check "
                 "them before relying on them.\n\n"
                 + "\n".join("\n".join(e) for e in entries) + "\n")
    return text


def retire_attempt(text: str, step: int, attempt: int | None = None) -> str:
    """NOTES.md ``text`` with the blockers and decisions of ``step``'s ``attempt`` (all of
    the step's, when None; an untagged attempt counts as any) moved to "Earlier
    attempts (reset)", each labelled "earlier attempt (reset): ...", so the retry does
    not take them as current. Discoveries stay: they are facts about the project."""
    preamble, sections = _parse(text)
    retired: list[list[str]] = []
    for title in (SECTIONS["decisions"], SECTIONS["blockers"]):
        section = _find(sections, title)
        if section is None:
            continue
        kept: list[tuple[bool, list[str]]] = []
        for is_entry, lines in section.blocks:
            m = _TAG_PARTS.search(lines[-1]) if is_entry else None
            if m and int(m.group(1)) == step and (
                    attempt is None or m.group(2) is None or int(m.group(2)) == attempt):
                first = _BULLET.sub("", lines[0])
                retired.append([f"- {RETIRED_LABEL}{title.lower()[:-1]}: {first}",
                                *lines[1:]])
            else:
                kept.append((is_entry, lines))
        section.blocks = kept
    if not retired:
        return text
    target = _find(sections, EARLIER_ATTEMPTS)
    if target is None:
        target = _Section(EARLIER_ATTEMPTS)
        sections.append(target)
    _append(target, retired)
    return _render(preamble, sections)


def add_notes(path: Path, facts: Mapping[str, Iterable[str]], step: int | None = None,
              archive_dir: Path | None = None, keep: int = DEFAULT_KEEP, *,
              attempt: int | None = None, plan: str | None = None,
              components: Mapping[int, str | None] | None = None) -> int:
    """Add new facts to NOTES.md and return how many were added.

    ``facts`` maps a kind (``discoveries``, ``decisions``, ``blockers``, or any
    section title) to texts. Duplicates of facts already in their section are
    skipped. Sections over ``keep`` bullets of a scope move its oldest bullets to
    ``archive_dir/NOTES-<section>.md`` (default: ``plans/archive`` beside NOTES.md).
    ``components`` maps each step of the plan to its ``component`` (None: none); without
    it every fact is plan-wide, right for a plan without components only.
    Each fact is tagged ``(step N)``, or ``(step N, attempt A)`` from a step's second
    attempt on (``attempt``: the step's resets + 1; an untagged one is its first).
    With ``plan`` (PLAN.md's ``created_at``), a file that names another plan is first
    replaced by ``notes_for_new_plan`` of it. The caller holds the plan lock.
    """
    try:
        text = read_text_file(path, errors="replace")
    except FileNotFoundError:
        text = _header(plan)
    owner = notes_plan(text)
    if plan is not None and owner != plan:
        text = notes_for_new_plan(text, plan) if owner is not None else _with_plan(text, plan)
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
            tag = "" if step is None else (f" (step {step})" if (attempt or 1) == 1
                                           else f" (step {step}, attempt {attempt})")
            new.append(_tagged(*_split(str(fact)), tag))
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
        old = _trim(section, keep, {} if section.title.startswith(PREVIOUS_PLAN)
                    else components or {})
        if old:
            name = f"NOTES-{slugify(section.title, 'section')}.md"
            _archive(archive_dir / name, section.title, old)
    atomic_write(path, _render(preamble, sections))
    return added


def _with_plan(text: str, plan: str) -> str:
    """A NOTES.md that names no plan (older maker, or a hand edit): name ``plan`` in it."""
    head, sep, rest = text.partition("\n## ")
    return f"{head.rstrip()}\n\nPlan: {plan}\n" + (f"\n## {rest}" if sep else "")


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


def _trim(section: _Section, keep: int,
          components: Mapping[int, str | None]) -> list[list[str]]:
    """Drop (and return) the section's oldest bullets past ``keep`` a scope: the facts of
    an earlier plan's steps (``components`` empty) are all plan-wide."""
    entries = [i for i, (is_entry, _) in enumerate(section.blocks) if is_entry]
    scopes = [fact_scope("\n".join(section.blocks[i][1]), components) for i in entries]
    drop = {i for i, stays in zip(entries, scoped_keep(scopes, keep), strict=True)
            if not stays}
    old = [section.blocks[i][1] for i in sorted(drop)]
    section.blocks = [b for i, b in enumerate(section.blocks) if i not in drop]
    return old


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
