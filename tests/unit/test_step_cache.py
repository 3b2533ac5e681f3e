"""A long-lived PlanStore keeps parsed step files (maker.store.step_cache): it must
never hand out a stale or shared record, whatever changed the file and however."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.step_plans import complete, linear
from maker.errors import PlanFileError
from maker.store import step_cache
from maker.store.plan_store import PlanStore


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as older than the file system's coarsest clock tick."""
    monkeypatch.setattr(step_cache, "SETTLED_NS", -10**18)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    from maker.store import plan_store, snapshot

    seen: list[Path] = []
    real = plan_store.read_step

    def counting(path: Path):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path)

    monkeypatch.setattr(plan_store, "read_step", counting)
    monkeypatch.setattr(snapshot, "read_step", counting)
    return seen


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite the file's bytes in the same inode, same size, and put its mtime back."""
    assert len(old) == len(new)
    st = os.stat(path)
    text = path.read_text()
    assert old in text
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_ino == st.st_ino and os.stat(path).st_size == st.st_size


def test_an_unchanged_file_is_parsed_once(project: Path, settled: None,
                                          parses: list[Path]) -> None:
    store = PlanStore(linear(project, 3).root)  # a new reader
    parses.clear()
    store.load()
    store.load()
    store.load()
    assert len(parses) == 3  # one parse per file, then copies


def test_an_edit_in_place_that_keeps_size_and_mtime_is_seen(project: Path,
                                                            settled: None) -> None:
    store = linear(project, 2)
    assert store.load().get(1).title == "Step number 1"
    _edit_in_place(store.load().get(1).path, "title: Step number 1", "title: Step NUMBER 1")
    assert store.load().get(1).title == "Step NUMBER 1"  # (the change time moved)


def test_a_recent_file_is_compared_by_its_bytes(project: Path, parses: list[Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(step_cache, "SETTLED_NS", 10**18)  # nothing is ever settled
    store = linear(project, 2)
    path = store.load().get(1).path
    parses.clear()
    store.load()
    assert parses == []  # same stamps, same bytes: the kept record
    real, stamp = step_cache.stat_stamp, step_cache.stat_stamp(path)
    _edit_in_place(path, "title: Step number 1", "title: Step NUMBER 1")
    # As if the file system's clock had not ticked: the stamps are all unchanged.
    monkeypatch.setattr(step_cache, "stat_stamp", lambda p: stamp if p == path else real(p))
    assert store.load().get(1).title == "Step NUMBER 1"  # same stamps, other bytes


def test_records_handed_out_are_copies(project: Path, settled: None) -> None:
    store = linear(project, 2)
    first = store.load().get(1)
    first.meta["started_by"] = "someone"
    first.meta.setdefault("reasons", []).append("x")
    first.depends_on.append(99)
    first.status = "failed"
    again = store.load().get(1)
    assert again.status == "pending" and "started_by" not in again.meta
    assert "reasons" not in again.meta and 99 not in again.depends_on


def test_a_broken_file_is_reported_every_time(project: Path, settled: None) -> None:
    store = linear(project, 2)
    path = store.load().get(2).path
    text = path.read_text()
    path.write_text(text.replace("status: pending", "status: finished"))
    for _ in range(2):
        with pytest.raises(PlanFileError, match="'finished' is not a status"):
            store.load()
    path.write_text(text)
    assert store.load().get(2).status == "pending"


def test_a_handoff_changed_after_approval_voids_the_approval(project: Path,
                                                             settled: None) -> None:
    store = linear(project, 2)
    complete(store, 1)
    assert store.load().get(1).status == "complete"  # sealed: kept as such
    handoff = store.handoffs_dir / store.load().get(1).path.name
    handoff.write_text(handoff.read_text().replace("result: ok", "result: no"))
    with pytest.raises(PlanFileError, match="maker holds no approval of it"):
        store.load()



# -- the snapshot of the last load (maker.store.snapshot) --------------------------------


def test_a_second_load_reads_only_the_files_that_changed(project: Path, settled: None,
                                                         parses: list[Path]) -> None:
    store = PlanStore(linear(project, 4).root)
    store.load()
    parses.clear()
    record = store.load().get(2)
    record.meta["started_by"] = "someone"
    store.save_step(record)
    again = store.load()
    assert parses == [record.path]  # the one file that moved
    assert again.get(2).meta["started_by"] == "someone"
    assert again.get(3).meta.get("started_by") is None


@pytest.mark.parametrize("edit", ["broken", "renumbered", "depends", "added", "removed",
                                  "complete"])
def test_whatever_changed_is_checked_as_a_first_load_would(project: Path, settled: None,
                                                          edit: str) -> None:
    store = PlanStore(linear(project, 3).root)
    fresh = PlanStore(store.root)
    path = store.load().get(2).path
    text = path.read_text()
    if edit == "broken":
        path.write_text(text.replace("status: pending", "status: finished"))
    elif edit == "renumbered":
        path.write_text(text.replace("step: 2", "step: 3", 1))
    elif edit == "depends":
        path.write_text(text.replace("depends_on:\n- 1", "depends_on:\n- 7"))
    elif edit == "added":
        (path.parent / "04-extra.md").write_text(text.replace("step: 2", "step: 4", 1))
    elif edit == "removed":
        path.unlink()
    else:  # marked complete by hand: no approval seal
        path.write_text(text.replace("status: pending", "status: complete"))
    for reader in (store, fresh):  # the kept snapshot and a first load agree
        try:
            got: object = [(r.number, r.status, r.depends_on) for r in reader.load().steps]
        except PlanFileError as exc:
            got = str(exc)
        if reader is store:
            kept = got
    assert kept == got
    assert edit in ("added", "removed") or isinstance(got, str)


def test_a_derived_value_is_kept_only_if_its_stamp_was_settled_before_the_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``derived`` judged "settled" after ``compute`` read the file: an edit in the
    stamp's tick made just after that read, while the stamp settled, kept the old value
    for ever (the rule ``read`` keeps: settled is judged before the bytes are read)."""
    from types import SimpleNamespace

    path = tmp_path / "01-a.md"
    path.write_text("old")
    stamp = (1, 3, 0, 0)  # the file's stamps, unchanged by the edit (the same tick)
    now = [step_cache.SETTLED_NS]  # maker's clock: the stamp is not yet settled
    monkeypatch.setattr(step_cache, "time", SimpleNamespace(time_ns=lambda: now[0]))
    monkeypatch.setattr(step_cache, "stat_stamp", lambda p: stamp)

    def compute(p: Path) -> str:
        text = p.read_text()
        if text == "old":
            p.write_text("new")  # the edit, just after the read
            now[0] += 1  # and the stamp is settled from now on
        return text

    cache = step_cache.StepCache()
    assert cache.derived(path, compute, stamp) == "old"  # what the file held when read
    assert cache.derived(path, compute, stamp) == "new"
