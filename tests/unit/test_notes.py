"""NOTES.md: sections, no duplicates, hand edits kept, bounded with an archive."""

from __future__ import annotations

from pathlib import Path

import pytest

from maker.store.notes import MAX_ENTRY_CHARS, add_notes, fact_key, read_notes


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return tmp_path / "plans" / "NOTES.md"


def test_new_file_has_a_section_per_kind(notes: Path) -> None:
    added = add_notes(notes, {"discoveries": ["The API retries on 429."],
                              "decisions": ["Use httpx."], "blockers": []}, step=2)
    assert added == 2
    text = notes.read_text(encoding="utf-8")
    assert text.startswith("# Notes\n")
    assert "## Discoveries\n\n- The API retries on 429. (step 2)\n" in text
    assert "## Decisions\n\n- Use httpx. (step 2)\n" in text
    assert "## Blockers" not in text
    assert read_notes(notes) == {"Discoveries": ["The API retries on 429. (step 2)"],
                                 "Decisions": ["Use httpx. (step 2)"]}


def test_nothing_new_writes_nothing(notes: Path) -> None:
    assert add_notes(notes, {"discoveries": [], "decisions": ["  "]}, step=1) == 0
    assert not notes.exists()


@pytest.mark.parametrize("again", [
    "The API retries on 429.",
    "the api retries on 429",
    "The  API retries\non 429!",
    "The API retries on 429. (step 7)",
    "- The API retries on 429.",
])
def test_duplicates_are_not_added(notes: Path, again: str) -> None:
    add_notes(notes, {"discoveries": ["The API retries on 429."]}, step=1)
    before = notes.read_text(encoding="utf-8")
    assert add_notes(notes, {"discoveries": [again]}, step=3) == 0
    assert notes.read_text(encoding="utf-8") == before


def test_duplicates_within_one_batch_and_across_sections(notes: Path) -> None:
    assert add_notes(notes, {"discoveries": ["X is slow", "x is slow."],
                             "decisions": ["X is slow"]}, step=1) == 2


def test_fact_key() -> None:
    assert fact_key("* Use X; (steps 1, 2)") == fact_key("use x")
    assert fact_key("") == ""


def test_hand_edits_are_kept(notes: Path) -> None:
    notes.parent.mkdir(parents=True)
    notes.write_text(
        "# Our notes\n\nWritten by hand.\n\n## Decisions\n\nWhy we chose things:\n\n"
        "* Keep Python 3.10 (team)\n  because of the servers\n\n## Glossary\n\n- SLO: target\n",
        encoding="utf-8")
    add_notes(notes, {"decisions": ["Use httpx"], "discoveries": ["Cache is per user"]}, step=4)
    text = notes.read_text(encoding="utf-8")
    assert text.startswith("# Our notes\n\nWritten by hand.\n")
    assert "Why we chose things:\n\n* Keep Python 3.10 (team)\n  because of the servers\n" \
           "- Use httpx (step 4)\n" in text
    assert "## Glossary\n\n- SLO: target\n" in text
    assert text.rstrip().endswith("## Discoveries\n\n- Cache is per user (step 4)")
    # The hand-written bullet counts for duplicates, continuation line and all.
    assert add_notes(notes, {"decisions": ["keep python 3.10 (team) because of the servers"]},
                     step=5) == 0


def test_section_headings_match_whatever_their_case(notes: Path) -> None:
    notes.parent.mkdir(parents=True)
    notes.write_text("## discoveries\n\n- a\n", encoding="utf-8")
    add_notes(notes, {"discoveries": ["b"]}, step=1)
    assert read_notes(notes) == {"discoveries": ["a", "b (step 1)"]}


def test_multi_line_and_long_facts(notes: Path) -> None:
    add_notes(notes, {"discoveries": ["first line\nsecond line", "y" * 5000]}, step=1)
    text = notes.read_text(encoding="utf-8")
    assert "- first line\n  second line (step 1)\n" in text
    long_line = next(line for line in text.splitlines() if line.startswith("- yyy"))
    assert len(long_line) < MAX_ENTRY_CHARS + 20 and "…" in long_line


def test_bounded_with_nothing_lost(notes: Path) -> None:
    facts = [f"fact number {i}" for i in range(25)]
    for i in range(0, 25, 5):
        add_notes(notes, {"discoveries": facts[i:i + 5], "decisions": [f"d{i}"]}, step=i,
                  keep=10)
    kept = read_notes(notes)["Discoveries"]
    assert len(kept) == 10
    assert kept[-1].startswith("fact number 24") and kept[0].startswith("fact number 15")
    archive = notes.parent / "archive" / "NOTES-discoveries.md"
    archived = [line[2:] for line in archive.read_text(encoding="utf-8").splitlines()
                if line.startswith("- ")]
    assert [a.split(" (step")[0] for a in archived] == facts[:15]
    assert len(read_notes(notes)["Decisions"]) == 5
    assert not (notes.parent / "archive" / "NOTES-decisions.md").exists()


@pytest.mark.parametrize(("kind", "archive"), [
    ("Open questions", "NOTES-open-questions.md"),
    ("Café notes", "NOTES-café-notes.md"),  # named as a step file would be (store.slug)
    ("!!!", "NOTES-section.md"),
])
def test_an_archive_is_named_by_the_one_slug(notes: Path, kind: str, archive: str) -> None:
    add_notes(notes, {kind: ["one", "two", "three"]}, step=1, keep=1)
    assert [p.name for p in (notes.parent / "archive").iterdir()] == [archive]


def test_other_kinds_become_their_own_section(notes: Path) -> None:
    add_notes(notes, {"Risks": ["disk may fill"]})
    assert read_notes(notes) == {"Risks": ["disk may fill"]}
