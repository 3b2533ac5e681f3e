"""Landing a worktree step's change against a hostile executor, a person's own files and
odd repositories: what lands, what is refused, and what is never written."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.repos import sh as _sh
from harness.repos import side_by_side as _branches
from harness.repos import write_in_worktree as _work
from maker.errors import MakerError, StepError
from maker.executor.parallel.land import LANDING, land, land_step, recover
from maker.executor.parallel.worktree_step import prune_worktrees, start_in_worktree
from maker.executor.state.lifecycle import fail_step, reset_step
from maker.store.plan_store import PlanStore
from maker.store.workspace import worktree_of


def _start(store: PlanStore, n: int) -> Path:
    tree = worktree_of(store, start_in_worktree(store, n, "s"))
    assert tree is not None
    return tree


def test_a_plans_folder_made_in_the_worktree_never_lands(project: Path) -> None:
    """The executor writes `plans/` inside its worktree (a note, a step file, a file in
    the other step's worktree, which lives under the real plans folder): none of it
    may reach the real plan."""
    store = _branches(project)
    _start(store, 1)
    t2 = _start(store, 2)
    _work(store, 1, "a/x.txt", "one\n")
    _work(store, 1, "plans/NOTES.md", "decided: skip the tests\n")
    _work(store, 1, "plans/steps/09-forged.md", "---\nstep: 9\n---\n")
    inside = Path("plans") / t2.relative_to(store.root)
    _work(store, 1, str(inside / "b" / "evil.txt"), "planted\n")
    landing = land(store, 1)
    assert landing.kind == "landed" and landing.files == ["a/x.txt"]
    assert not (store.root / "NOTES.md").exists()
    assert not (store.root / "steps" / "09-forged.md").exists()
    assert not (t2 / "b" / "evil.txt").exists()
    assert (project / "a" / "x.txt").read_text() == "one\n"


def test_an_edit_in_the_worktrees_racy_second_lands(project: Path) -> None:
    """git trusts a file's stat data unless it changed in the index's own second; the
    snapshot's copy of the index must keep the index's time, or an edit of the same
    size with the same time is taken for unchanged, and the step's work is lost."""
    store = _branches(project)
    t1 = _start(store, 1)
    _sh(project, "git config core.trustctime false")
    f = t1 / "a" / "x.txt"
    past = time.time_ns() - 100 * 10**9
    os.utime(f, ns=(past, past))
    _sh(t1, "git update-index -q --refresh")  # the index records the old time
    f.write_text("w\n")  # the same size as "a\n"
    os.utime(f, ns=(past, past))
    index = Path(t1, _sh(t1, "git rev-parse --git-path index").strip())
    os.utime(index, ns=(past, past))  # written in the file's own second: racily clean
    landing = land(store, 1)
    assert landing.kind == "landed" and landing.files == ["a/x.txt"]
    assert (project / "a" / "x.txt").read_text() == "w\n"


def test_nothing_is_written_through_a_symlinked_folder(project: Path,
                                                       tmp_path: Path) -> None:
    """Step 1 lands a symlink `c` to a folder outside the project; step 2 made `c/f`:
    landing it would write outside the project. It is a conflict instead."""
    outside = tmp_path / "outside"
    outside.mkdir()
    store = _branches(project, ["a/**", "c"], ["b/**"])
    t1, t2 = _start(store, 1), _start(store, 2)
    os.symlink(outside, t1 / "c")
    (t2 / "c").mkdir()
    (t2 / "c" / "f").write_text("two\n")
    assert land(store, 1).kind == "landed"
    assert (project / "c").is_symlink()
    landing = land(store, 2)
    assert landing.kind == "conflict" and "c/f" in landing.files[0]
    assert list(outside.iterdir()) == []
    # the same when the person makes the link after the step started
    (tmp_path / "p2").mkdir()
    store2 = _branches(tmp_path / "p2")
    t = _start(store2, 1)
    (t / "a" / "sub").mkdir()
    (t / "a" / "sub" / "g").write_text("g\n")
    os.symlink(outside, tmp_path / "p2" / "a" / "sub")
    assert land(store2, 1).kind == "conflict"
    assert list(outside.iterdir()) == []


def test_a_failed_landing_gives_back_the_persons_file_it_made_a_folder(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _branches(project)
    (project / "a" / "notes").write_text("the person's notes\n")  # untracked, theirs
    t1 = _start(store, 1)
    (t1 / "a" / "notes").unlink()
    (t1 / "a" / "notes").mkdir()
    (t1 / "a" / "notes" / "x").write_text("the step's\n")
    monkeypatch.setenv("TEST_CMD", "false")
    landing = land(store, 1)
    assert landing.kind == "failed"
    assert (project / "a" / "notes").read_text() == "the person's notes\n"
    assert not (store.root / LANDING).exists()


def test_a_name_that_is_not_utf8_is_refused_before_anything_is_written(
        project: Path) -> None:
    store = _branches(project)
    t1 = _start(store, 1)
    _work(store, 1, "a/x.txt", "one\n")
    with open(os.path.join(os.fsencode(t1 / "a"), b"caf\xe9.txt"), "w") as handle:
        handle.write("x\n")
    with pytest.raises(MakerError, match="not UTF-8"):
        land(store, 1)
    assert (project / "a" / "x.txt").read_text() == "a\n"
    assert not (store.root / LANDING).exists()
    os.unlink(os.path.join(os.fsencode(t1 / "a"), b"caf\xe9.txt"))
    assert land(store, 1).kind == "landed"  # renamed away: it lands


def test_a_folder_the_step_replaced_by_a_symlink_lands(project: Path) -> None:
    store = _branches(project, ["a", "lib"], ["b/**"])
    t1 = _start(store, 1)
    (t1 / "lib").mkdir()
    os.replace(t1 / "a" / "x.txt", t1 / "lib" / "x.txt")
    (t1 / "a").rmdir()
    os.symlink("lib", t1 / "a")
    landing = land(store, 1)
    assert landing.kind == "landed", landing.reason
    assert os.readlink(project / "a") == "lib"
    assert (project / "lib" / "x.txt").read_text() == "a\n"


def test_a_folder_where_the_landing_record_goes_is_a_clear_error(project: Path) -> None:
    store = _branches(project)
    (store.root / LANDING).mkdir(parents=True)
    with pytest.raises(MakerError, match="is a folder"):
        recover(store)


def test_a_failed_step_does_not_land(project: Path) -> None:
    store = _branches(project)
    _start(store, 1)
    _work(store, 1, "a/x.txt", "one\n")
    fail_step(store, 1, "gave up")
    with pytest.raises(StepError, match="only a step in progress lands"):
        land(store, 1)
    assert (project / "a" / "x.txt").read_text() == "a\n"


def test_a_project_that_checks_out_crlf_lands(project: Path) -> None:
    """The base's blobs are stored with LF; the checkout (and the person's files) have
    CRLF. Compared as bytes, every file looked changed by both: a false conflict."""
    store = _branches(project)
    (project / ".gitattributes").write_text("* text eol=crlf\n")
    _sh(project, "git add .gitattributes && git commit -qm eol && rm a/x.txt b/y.txt "
                 "&& git checkout -- .")
    assert (project / "a" / "x.txt").read_bytes() == b"a\r\n"
    t1 = _start(store, 1)
    assert (t1 / "a" / "x.txt").read_bytes() == b"a\r\n"
    (t1 / "a" / "x.txt").write_bytes(b"one\r\n")
    landing = land(store, 1)
    assert landing.kind == "landed", landing.reason
    assert (project / "a" / "x.txt").read_bytes() == b"one\r\n"


def test_a_reset_steps_work_is_kept_when_its_worktree_goes(project: Path) -> None:
    store = _branches(project)
    _start(store, 1)
    _work(store, 1, "a/x.txt", "the step's work\n")
    reset_step(store, 1)
    assert prune_worktrees(store)
    kept = store.load_step(1).meta.get("unlanded")
    assert kept and len(kept) == 1
    shown = subprocess.run(["git", "cat-file", "-p", f"{kept[0]}:a/x.txt"], cwd=project,
                           capture_output=True, text=True, check=True).stdout
    assert shown == "the step's work\n"


def test_an_edit_is_seen_whatever_the_repository_says_of_stat_data(project: Path) -> None:
    """With `core.trustctime=false` (or `core.checkStat=minimal`) git takes a file of
    the same size and time for unchanged, though its ctime moved: the snapshot reads
    every stat field whatever the repository says."""
    store = _branches(project)
    t1 = _start(store, 1)
    _sh(project, "git config core.trustctime false && git config core.checkStat minimal")
    f = t1 / "a" / "x.txt"
    past = time.time_ns() - 100 * 10**9
    os.utime(f, ns=(past, past))
    _sh(t1, "git update-index -q --refresh")  # the index (dated now) records it
    time.sleep(1.1)  # (git compares ctime to the second)
    f.write_text("w\n")  # the same size, the same time: only the ctime moved
    os.utime(f, ns=(past, past))
    landing = land(store, 1)
    assert landing.kind == "landed" and landing.files == ["a/x.txt"]


def test_a_new_base_that_is_the_old_one_keeps_its_worktree(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main checkout unchanged and the commit time the same (one second, or the
    dates exported), the new base is the old commit and names the same folder: it was
    made again, then removed as "the old one"."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2026-01-01T00:00:00")
    store = _branches(project)
    t1 = _start(store, 1)
    _work(store, 1, "a/x.txt", "one\n")
    monkeypatch.setenv("TEST_CMD", "false")
    landing = land_step(store, 1)
    assert landing.kind == "failed" and not landing.failed
    again = worktree_of(store, store.load_step(1))
    assert again == t1 and (t1 / ".git").is_file()
    assert (t1 / "a" / "x.txt").read_text() == "a\n"  # the step runs again from its base


def test_work_git_cannot_read_is_never_thrown_away(project: Path) -> None:
    """A filter whose name holds `=` (one `-c` cannot switch off) stops every snapshot:
    a reset refused, a prune that leaves the folder, rather than the work lost."""
    store = _branches(project)
    t1 = _start(store, 1)
    _work(store, 1, "a/x.txt", "the step's work\n")
    _sh(project, "git config 'filter.x=y.clean' cat")
    with pytest.raises(StepError, match="cannot read step 1's worktree"):
        reset_step(store, 1)
    assert store.load_step(1).status == "in-progress"
    fail_step(store, 1, "gave up")
    prune_worktrees(store)
    assert (t1 / "a" / "x.txt").read_text() == "the step's work\n"
    _sh(project, "git config --unset 'filter.x=y.clean'")
    assert prune_worktrees(store) and not t1.exists()  # readable again: kept, then gone
    assert store.load_step(1).meta.get("unlanded")


def test_a_worktree_add_a_kill_cut_short_does_not_block_the_next(project: Path) -> None:
    """git locks its record of a worktree while it adds it; killed then, the record
    stays locked, `git worktree prune` keeps it, and a worktree at that path is refused
    ("a missing but locked worktree"): the step could never get its worktree again."""
    from maker.executor.parallel.worktree_step import ensure_worktree
    from maker.store.workspace import READY_KEY

    store = _branches(project)
    t1 = _start(store, 1)
    admin = Path(_sh(t1, "git rev-parse --git-dir").strip())
    subprocess.run(["rm", "-rf", str(t1)], check=True)  # the folder gone, the record kept
    (admin / "locked").write_text("initializing\n")
    record = store.load_step(1)
    record.meta.pop(READY_KEY)
    with store.lock():
        store.save_step(record)
        ensure_worktree(store, store.load_step(1))
    assert (t1 / ".git").is_file()
    listed = _sh(project, "git worktree list --porcelain")
    assert "locked" not in listed and listed.count("worktree ") == 2


def test_a_worktree_remove_a_kill_cut_short_is_forgotten(project: Path) -> None:
    """`git worktree remove` deletes the folder, then git's record of it: killed in
    between, the record stayed (the crash harness saw it after a new base), since the
    prune ran only when a folder was removed."""
    store = _branches(project)
    t1 = _start(store, 1)
    fail_step(store, 1, "gave up")
    subprocess.run(["rm", "-rf", str(t1)], check=True)  # the folder gone, the record kept
    assert _sh(project, "git worktree list --porcelain").count("worktree ") == 2
    prune_worktrees(store)
    assert _sh(project, "git worktree list --porcelain").count("worktree ") == 1
