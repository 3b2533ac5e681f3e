"""Which steps run together, their worktrees, and bringing their changes back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.repos import sh, side_by_side, write_in_worktree
from harness.step_plans import make_step, step_data
from maker.errors import PlanValidationError, StepError
from maker.executor.parallel.land import LANDING, land, recover
from maker.executor.parallel.waves import wave
from maker.executor.parallel.worktree_step import on_new_base, prune_worktrees, start_in_worktree
from maker.executor.state.schedule import plan_schedule
from maker.planner.parser import parse_plan
from maker.planner.writes import may_overlap, shared_hit
from maker.store.workspace import LANDED_KEY, step_project, worktree_of


@pytest.mark.parametrize(("a", "b", "meet"), [
    ("src/a/**", "src/b/x.py", False), ("src/*.py", "src/main.py", True),
    ("src/a.py", "src/b.py", False), ("docs/*.md", "src/*.py", False), ("src", "src/x", True),
    ("**/x", "y/z", True), ("a/[bc].py", "a/d.py", False), ("a/*.py", "a/*.md", True),
    # a trailing slash names a folder, a dot in its name or not
    ("docs/v1.0/", "docs/v1.0/index.md", True), ("pkg.d/", "pkg.d/x", True),
    ("src/*/", "src/sub/x.py", True), ("docs/v1.0/", "docs/v2.0/index.md", False),
])
def test_overlap_is_conservative(a: str, b: str, meet: bool) -> None:
    assert may_overlap(a, b) is meet
    assert may_overlap(b, a) is meet


def test_shared_files_and_the_projects_own() -> None:
    assert shared_hit(["package-lock.json"], ()) is not None
    assert shared_hit(["db/migrations/0001.py"], ()) is not None
    assert shared_hit(["src/app.py"], ()) is None
    assert shared_hit(["src/app.py"], ["src/app.py"]) is not None


def test_writes_is_linted() -> None:
    for bad in ("src/**", ["/etc/passwd"], ["../x"], [3], ["a"] * 201, ["src/{a,b}/**"]):
        with pytest.raises(PlanValidationError, match="writes"):
            parse_plan({"reasoning": "r", "plan": [step_data(0, -1, writes=bad)]})
    plan = parse_plan({"reasoning": "r", "plan": [step_data(0, -1, writes=[" src/** "])]})
    assert plan.steps[0].writes == ["src/**"]


def test_a_wave_is_the_ready_steps_whose_writes_cannot_meet(project: Path) -> None:
    store = side_by_side(project, n=4)
    plan = store.load()
    assert plan.get(1).spec.writes == ["a/**"]  # (kept in the step file)
    sched = plan_schedule(store, plan)
    assert wave(store, plan, sched, 4) == [1, 2, 3, 4]
    assert wave(store, plan, sched, 2) == [1, 2]
    assert wave(store, plan, sched, 1) == [1]


@pytest.mark.parametrize(("w1", "w2"), [(["a/x.txt"], ["a/**"]), (None, ["b/**"]),
                                        (["a/**", "uv.lock"], ["b/**"])])
def test_a_step_that_may_meet_another_or_says_nothing_runs_alone(
        project: Path, w1: list[str] | None, w2: list[str]) -> None:
    store = side_by_side(project, w1 if w1 is not None else [], w2)
    if w1 is None:
        record = store.load_step(1)
        record.spec = make_step(1, 2, depends_on=[0])
        store.save_step(record)
    plan = store.load()
    assert wave(store, plan, plan_schedule(store, plan), 4) == [1]


def test_two_steps_work_apart_and_both_land(project: Path) -> None:
    store = side_by_side(project)
    (project / "notes.txt").write_text("the person's own, uncommitted\n")
    one = start_in_worktree(store, 1, "s")
    two = start_in_worktree(store, 2, "s")
    t1, t2 = worktree_of(store, one), worktree_of(store, two)
    assert t1 and t2 and t1 != t2 and step_project(store, one) == t1
    assert (t1 / "notes.txt").read_text() == "the person's own, uncommitted\n"  # its base
    assert not (t1 / "plans").exists()  # the plan stays in the main checkout alone
    assert sh(project, "git status --porcelain --untracked-files=all") .count(
        ".maker/worktrees") == 0
    write_in_worktree(store, 1, "a/x.txt", "one\n")
    write_in_worktree(store, 2, "b/new.txt", "two\n")
    assert (project / "a" / "x.txt").read_text() == "a\n"  # nothing lands before its turn
    assert land(store, 2).kind == "landed"
    assert land(store, 1).kind == "landed"
    assert (project / "a" / "x.txt").read_text() == "one\n"
    assert (project / "b" / "new.txt").read_text() == "two\n"
    assert (project / "notes.txt").read_text() == "the person's own, uncommitted\n"
    assert store.load_step(1).meta["landed_files"] == ["a/x.txt"]
    assert not t1.exists() and not t2.exists()
    assert "step-" not in sh(project, "git worktree list")


def test_a_step_cannot_join_a_wave_it_would_clash_with(project: Path) -> None:
    store = side_by_side(project, ["a/**"], ["a/x.txt"])
    start_in_worktree(store, 1, "s")
    with pytest.raises(StepError, match="cannot run beside"):
        start_in_worktree(store, 2, "s")


def test_a_conflict_writes_nothing_and_the_step_runs_again_on_the_new_base(
        project: Path) -> None:
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    write_in_worktree(store, 1, "a/x.txt", "the step's\n")
    (project / "a" / "x.txt").write_text("the person's\n")
    landing = land(store, 1)
    assert landing.kind == "conflict" and landing.files == ["a/x.txt"]
    assert (project / "a" / "x.txt").read_text() == "the person's\n"
    again = on_new_base(store, 1, landing.reason, landing.end)
    fresh = worktree_of(store, again)
    assert fresh and (fresh / "a" / "x.txt").read_text() == "the person's\n"
    assert again.meta["unlanded"] == [landing.end] and again.meta["land_attempts"] == 1
    write_in_worktree(store, 1, "a/x.txt", "the person's\nand the step's\n")
    assert land(store, 1).kind == "landed"
    assert (project / "a" / "x.txt").read_text() == "the person's\nand the step's\n"


def test_a_run_on_a_new_base_is_bounded(project: Path) -> None:
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    for _ in range(2):
        on_new_base(store, 1, "conflict")
    assert on_new_base(store, 1, "conflict").status == "failed"


def test_a_merged_tree_that_fails_verification_is_undone(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_CMD", "! grep -q broken a/x.txt")
    store = side_by_side(project)
    (project / "Makefile").write_text("test:\n\t! grep -q broken a/x.txt\n")
    sh(project, "git add -A && git commit -qm make")
    start_in_worktree(store, 1, "s")
    write_in_worktree(store, 1, "a/x.txt", "broken\n")
    landing = land(store, 1)
    assert landing.kind == "failed" and "grep -q broken" in landing.reason
    assert (project / "a" / "x.txt").read_text() == "a\n"
    assert not (store.root / LANDING).exists()
    assert not store.load_step(1).meta.get(LANDED_KEY)


def test_a_killed_landing_is_put_back(project: Path) -> None:
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    write_in_worktree(store, 1, "a/x.txt", "one\n")
    write_in_worktree(store, 1, "a/y.txt", "new\n")
    record = store.load_step(1)
    end = subprocess.run(["git", "-C", str(worktree_of(store, record)), "add", "-A"],
                         check=True)
    assert end.returncode == 0
    tree = sh(worktree_of(store, record) or project, "git write-tree").strip()
    (store.root / LANDING).write_text(
        f'{{"step": 1, "base": "{record.meta["measured_from"]}", "end": "{tree}", '
        '"files": ["a/x.txt", "a/y.txt"]}')
    (project / "a" / "x.txt").write_text("one\n")  # written before the kill; y was not
    recover(store)
    assert (project / "a" / "x.txt").read_text() == "a\n"
    assert not (project / "a" / "y.txt").exists()
    assert land(store, 1).kind == "landed"  # and it lands whole afterwards
    assert (project / "a" / "y.txt").read_text() == "new\n"


def test_orphaned_worktrees_are_pruned(project: Path) -> None:
    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    record = store.load_step(1)
    record.status = "pending"
    store.save_step(record)
    assert len(prune_worktrees(store)) == 1
    assert "step-" not in sh(project, "git worktree list")


def test_plan_md_and_status_show_which_steps_run_together(project: Path) -> None:
    from maker.executor.loop.status_view import status_summary

    store = side_by_side(project, n=3)
    text = store.overview_path.read_text()
    assert "## Steps that may run together" in text
    assert "- step 1 beside steps 2, 3" in text
    assert "May run together: steps 1, 2, 3" in status_summary(store)
    start_in_worktree(store, 1, "s")
    start_in_worktree(store, 2, "s")
    assert "Running together: steps 1, 2, each in its own worktree" in status_summary(store)


def test_no_step_runs_beside_one_it_depends_on_however_indirectly() -> None:
    from maker.planner.writes import beside

    pairs = beside([(0, [], ["a"]), (1, [0], ["b"]), (2, [1], ["c"]), (3, [], ["d"]),
                    (4, [], None), (5, [], ["uv.lock"])])
    assert pairs == {0: [3], 1: [3], 2: [3], 3: [0, 1, 2]}


def test_a_failed_steps_worktree_is_removed_and_its_work_kept(project: Path) -> None:
    from maker.executor.state.lifecycle import fail_step

    store = side_by_side(project)
    start_in_worktree(store, 1, "s")
    tree = write_in_worktree(store, 1, "a/x.txt", "half done\n")
    fail_step(store, 1, "it could not be done")
    assert prune_worktrees(store) and not tree.exists()
    kept = store.load_step(1).meta["unlanded"]
    shown = sh(project, f"git show {kept[-1]}:a/x.txt")
    assert shown == "half done\n"
    assert "step-" not in sh(project, "git worktree list")


def test_parallel_and_shared_settings_are_checked_and_obeyed(project: Path) -> None:
    from maker.errors import PlanFileError
    from maker.store.settings import load_settings

    store = side_by_side(project, ["a/**"], ["docs/api.md"])
    (store.root / "settings.yaml").write_text("parallel: 0\n")
    with pytest.raises(PlanFileError, match="parallel"):
        load_settings(store.root)
    (store.root / "settings.yaml").write_text("shared: [docs/*.md]\n")
    plan = store.load()
    assert wave(store, plan, plan_schedule(store, plan), 4) == [1]  # step 2 waits
