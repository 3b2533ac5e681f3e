"""A handoff's claims against what maker measured, both ways: a claimed file that did
not change is refused, as is a complete handoff that never oriented; a step whose tools
can write and that changed nothing must say so, and the person is told in words they
cannot miss; without git, the files stay the executor's claim wherever they are shown."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.named import named_to_the_person
from harness.step_plans import handoff, step_spec, write
from maker.cli.main import cli
from maker.errors import HandoffRejectedError
from maker.executor.acceptance.accept import accept_handoff
from maker.executor.loop.status_view import status_summary
from maker.executor.loop.words import approval_screen
from maker.executor.protocol.orient import record_orient
from maker.executor.state.lifecycle import start_step
from maker.executor.verdicts.outcome import outcome
from maker.handoff.measured import NO_FILE_CHANGED, measured_lines
from maker.store.plan_store import PlanStore

WRITER = step_spec(1, -1, primary_tools=["Read", "Write", "Edit"])
READER = step_spec(1, -1, primary_tools=["Read", "Grep"])


def _started(project: Path, *, git: bool = True, step: object = WRITER,
             orient: bool = True) -> PlanStore:
    if git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    store = write(project, [step], policy="never")  # (a person approves: the question shows)
    start_step(store, 1, session_id="sess-1")
    if orient:
        record_orient(store, 1, "none")
    return store


def _refused(store: PlanStore, text: str) -> str:
    with pytest.raises(HandoffRejectedError) as refused:
        accept_handoff(store, text)
    return "\n".join(str(p) for p in refused.value.problems)


def test_a_phantom_handoff_is_refused_naming_the_file_and_the_fix(project: Path) -> None:
    """The issue's own case: nothing written, `complete` with hello.txt claimed."""
    store = _started(project)
    said = _refused(store, handoff(1, files_changed=["hello.txt"]))
    assert "files_changed: names 1 file(s) maker measured no change to since the step " \
           "began: hello.txt" in said
    assert "remove each from `files_changed`, or make the change it names" in said
    assert store.load_step(1).status == "in-progress"  # nothing recorded
    assert store.read_handoff(1) is None
    # Made for real, the same handoff is accepted, and the measure kept beside it.
    (project / "hello.txt").write_text("hello\n")
    assert accept_handoff(store, handoff(1, files_changed=["hello.txt"])).status == \
        "awaiting-approval"
    assert store.read_handoff(1)["files_measured"] == ["hello.txt"]


def test_one_phantom_among_real_changes_is_named_alone(project: Path) -> None:
    store = _started(project)
    (project / "src").mkdir()
    (project / "src/a.py").write_text("a\n")
    said = _refused(store, handoff(1, files_changed=["src/", "docs/ghost.md (new)",
                                                     "b.py"]))
    assert "names 2 file(s) maker measured no change to since the step began: " \
           "docs/ghost.md, b.py" in said
    assert "leaves out" not in said  # (src/ covers src/a.py)


def test_a_complete_handoff_that_never_oriented_is_refused(project: Path) -> None:
    store = _started(project, orient=False)
    (project / "hello.txt").write_text("hello\n")
    said = _refused(store, handoff(1, files_changed=["hello.txt"]))
    assert "status: step 1 is handed off complete, but its orientation was never recorded" \
        in said
    assert "run `maker orient 1 none`" in said
    # A blocked handoff needs no orientation: an executor may give up before it.
    accept_handoff(store, handoff(1, status="blocked", blockers=["no access"],
                                  files_changed=["hello.txt"]))
    assert store.load_step(1).status == "blocked"


def test_a_step_that_only_reads_needs_no_orientation_and_claims_nothing(
        project: Path) -> None:
    store = _started(project, step=READER, orient=False)
    (project / "other.txt").write_text("someone else's\n")  # not the step's: it cannot write
    said = _refused(store, handoff(1, files_changed=["other.txt"]))
    assert "names 1 file(s) maker measured no change to" in said and "orient" not in said
    assert accept_handoff(store, handoff(1)).status == "awaiting-approval"


def test_nothing_changed_must_be_said_and_then_the_person_cannot_miss_it(
        project: Path) -> None:
    store = _started(project)
    said = _refused(store, handoff(1))  # (no files_changed at all)
    assert "maker measured no change to any file since the step began, and the handoff " \
           "does not say so" in said and "`files_changed: []`" in said
    accept_handoff(store, handoff(1, files_changed=[]))
    out = outcome(store, 1)
    question = out["ask"]["questions"][0]["question"]
    assert question.startswith("maker: approve step 1 (") and NO_FILE_CHANGED in question
    assert NO_FILE_CHANGED in out["files_note"]
    assert NO_FILE_CHANGED in status_summary(store)
    shown = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert shown.exit_code == 0, shown.output
    assert f"Step 1 (Step number 1): {NO_FILE_CHANGED}: maker measured no change" \
        in shown.output.replace(WRITER.title, "Step number 1")


def test_the_person_reads_each_files_lines_and_the_diff_that_shows_them(
        project: Path) -> None:
    (project / "kept.txt").write_text("one\ntwo\nthree\n")
    store = _started(project)
    (project / "kept.txt").write_text("one\n2\nthree\nfour\n")  # +2 -1
    (project / "new file.bin").write_bytes(b"\0\1\2")
    accept_handoff(store, handoff(1, files_changed=["kept.txt", "new file.bin"]))
    record = store.load_step(1)
    counts, diff = measured_lines(store, record, ["kept.txt", "new file.bin"]) or ({}, "")
    assert counts == {"kept.txt": (2, 1), "new file.bin": (-1, -1)}
    shown = subprocess.run(diff, shell=True, cwd=project, capture_output=True, text=True,
                           check=True).stdout
    assert "+four" in shown and "-two" in shown and "'new file.bin'" in diff
    screen = approval_screen(store)
    assert "kept.txt (+2 -1)" in screen and "new file.bin (binary)" in screen
    assert f"`{diff}`" in screen


def test_a_step_that_changed_files_gets_no_such_note(project: Path) -> None:
    store = _started(project)
    (project / "hello.txt").write_text("hello\n")
    accept_handoff(store, handoff(1, files_changed=["hello.txt"]))
    out = outcome(store, 1)
    assert NO_FILE_CHANGED not in out["ask"]["questions"][0]["question"]
    assert out["files_note"] == ""
    assert NO_FILE_CHANGED not in status_summary(store)


def test_without_git_the_files_stay_a_claim_everywhere_they_are_shown(
        project: Path) -> None:
    store = _started(project, git=False)
    accept_handoff(store, handoff(1, files_changed=["hello.txt"]))  # (cannot be checked)
    out = outcome(store, 1)
    note = "the files changed are the executor's claim: maker could not measure them"
    assert note in out["files_note"] and note in out["ask"]["questions"][0]["question"]
    assert note in status_summary(store)
    shown = CliRunner().invoke(cli, ["status", "--plans-dir", str(store.root)])
    assert note in shown.output
    said = CliRunner().invoke(cli, ["step", "outcome", "1", "--plans-dir", str(store.root)])
    assert "files changed: 1 (the executor's claim)" in said.output


@pytest.mark.parametrize("entry", ["a.py ghost.py", "a.py\tghost.py", "a.py (new) ghost.py",
                                   "ghost.py: a.py", "./ghost.py"])
def test_a_phantom_cannot_hide_beside_a_real_change_in_one_entry(project: Path,
                                                                 entry: str) -> None:
    store = _started(project)
    (project / "a.py").write_text("a\n")
    said = _refused(store, handoff(1, files_changed=[entry, "a.py"]))
    assert "ghost.py" in said and "measured no change to" in said


@pytest.mark.parametrize("entry", ["a.py", "./a.py", "src/../a.py", "a.py (new)",
                                   "a.py: the fix", "a.py - the fix", "`a.py`"])
def test_a_real_change_is_claimed_in_any_of_the_usual_ways(project: Path, entry: str) -> None:
    store = _started(project)
    (project / "a.py").write_text("a\n")
    assert accept_handoff(store, handoff(1, files_changed=[entry])).status == \
        "awaiting-approval"


def test_a_file_name_with_spaces_is_one_claim(project: Path) -> None:
    store = _started(project)
    (project / "my notes.txt").write_text("n\n")
    accept_handoff(store, handoff(1, files_changed=["my notes.txt"]))
    assert store.read_handoff(1)["files_measured"] == ["my notes.txt"]


def _forge_index_entry(project: Path, name: str) -> None:
    """Rewrite the repository's index so that ``name``'s entry holds the blob it had at
    HEAD with the file's current stat data: git then takes the edited file for unchanged
    (what a step with a shell could do to hide an edit from a measure seeded by it)."""
    import hashlib
    import struct

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                              text=True).stdout.strip()

    old = git("rev-parse", f"HEAD:{name}")
    time.sleep(1.1)  # (an index written in the file's own second is "racily clean")
    git("update-index", name)  # (its entry: the new blob, the current stat)
    data = (project / ".git/index").read_bytes()
    count = struct.unpack(">4sII", data[:12])[2]
    out, pos = bytearray(data[:12]), 12
    for _ in range(count):
        length = struct.unpack(">H", data[pos + 60:pos + 62])[0] & 0xFFF
        size = ((62 + length + 8) // 8) * 8
        entry = bytearray(data[pos:pos + size])
        if data[pos + 62:pos + 62 + length] == name.encode():
            entry[40:60] = bytes.fromhex(old)
        out += entry
        pos += size
    (project / ".git/index").write_bytes(bytes(out) + hashlib.sha1(out).digest())
    assert git("status", "--porcelain", "--", name) == ""  # (git itself is fooled)


def test_an_edit_hidden_in_the_repositorys_index_is_still_measured(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "app.py").write_text("def ok():\n    return False\n")
    for args in (["add", "-A"], ["-c", "user.email=a@b", "-c", "user.name=a", "commit",
                                 "-qm", "base"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    store = _started(project, git=False)
    (project / "app.py").write_text("def ok():\n    return True\n")
    _forge_index_entry(project, "app.py")
    said = _refused(store, handoff(1, files_changed=[]))
    assert "leaves out 1 file(s) this step changed" in said and "app.py" in said


@pytest.mark.parametrize(("spec", "route"), [
    (WRITER, "person"),  # its tools can write, and it changed nothing: a person decides
    (step_spec(1, -1, primary_tools=["Read", "Write"], writes=[]), "policy"),  # as planned
    (READER, "policy"),  # it could change nothing
])
def test_no_policy_approves_a_writing_step_that_changed_nothing(
        project: Path, spec: object, route: str) -> None:
    from maker.executor.acceptance.review_route import review_need

    store = _started(project, step=spec, orient=spec is not READER)
    accept_handoff(store, handoff(1, files_changed=[]))
    record = store.load_step(1)
    assert review_need(store, record, "auto").route == route


def test_a_writing_step_that_changed_a_file_is_the_policys(project: Path) -> None:
    from maker.executor.acceptance.review_route import review_need

    store = _started(project)
    (project / "made.txt").write_text("x\n")
    accept_handoff(store, handoff(1, files_changed=["made.txt"]))
    assert review_need(store, store.load_step(1), "auto").route == "policy"


def _nested_repository(where: Path) -> Path:
    """A repository of its own, with a commit and a program its config names (what a
    person's git would run on entering it); where that program leaves its mark."""
    mark = where.parents[2] / "fsmonitor-ran"  # (outside the project)
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    (where / "f.txt").write_text("f\n")
    subprocess.run(["git", "-C", str(where), "add", "f.txt"], check=True)
    subprocess.run(["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "x"], check=True)
    subprocess.run(["git", "-C", str(where), "config", "core.fsmonitor", f"touch '{mark}'"],
                   check=True)
    return mark


@pytest.mark.parametrize("added", [False, True])
def test_a_nested_repository_a_step_adds_is_named_and_no_policy_takes_it(
        project: Path, added: bool) -> None:
    """Made in the tree (or added to the index as a gitlink, as `git add vendor/lib`
    does), it is named to the person at the question, on the screen and in maker status,
    and the step goes to them whatever the policy."""
    from maker.executor.acceptance.review_route import review_need
    from maker.handoff.measured import NESTED_ADDED

    store = _started(project)
    mark = _nested_repository(project / "vendor/lib")
    if added:
        subprocess.run(["git", "-C", str(project), "-c", "core.fsmonitor=", "add",
                        "vendor/lib"], check=True, capture_output=True)
    accept_handoff(store, handoff(1, files_changed=["vendor/lib"]))
    record = store.load_step(1)
    assert store.read_handoff(1)["repositories_added"] == ["vendor/lib"]
    assert review_need(store, record, "auto").route == "person"
    out = outcome(store, 1)
    assert f"{NESTED_ADDED}: vendor/lib" in out["ask"]["questions"][0]["question"]
    assert f"{NESTED_ADDED}: vendor/lib" in approval_screen(store)
    assert NESTED_ADDED in status_summary(store)
    assert not mark.exists()  # (maker's git entered no nested repository)


@pytest.mark.parametrize("made", ["sub/.envrc", "web/.vscode/tasks.json", "tools/mise.toml",
                                  "pkg/.pre-commit-config.yaml"])
def test_a_file_that_runs_code_later_below_the_top_is_named_and_no_policy_takes_it(
        project: Path, made: str) -> None:
    """The box removes such a file a command made at the top of the step's folder, not
    below it (a tree walk on every call): one there is named to the person at the
    question, on the screen and in maker status, and the step goes to them whatever the
    policy. One the step's writes name is its own."""
    from maker.handoff.measured import RUNS_LATER

    store = _started(project)
    (project / made).parent.mkdir(parents=True, exist_ok=True)
    (project / made).write_text("echo planted\n")
    accept_handoff(store, handoff(1, files_changed=[made]))
    assert store.read_handoff(1)["runs_later_added"][0].startswith(f"{made} (")
    named_to_the_person(store, 1, f"{RUNS_LATER}: {made} (", RUNS_LATER)


def test_a_file_that_runs_code_later_the_writes_name_is_the_steps_own(project: Path) -> None:
    from maker.executor.acceptance.review_route import review_need

    store = _started(project, step=step_spec(1, -1, primary_tools=["Read", "Write"],
                                             writes=["sub/.envrc"]))
    (project / "sub").mkdir()
    (project / "sub/.envrc").write_text("use nix\n")
    accept_handoff(store, handoff(1, files_changed=["sub/.envrc"]))
    assert "runs_later_added" not in store.read_handoff(1)
    assert review_need(store, store.load_step(1), "auto").route == "policy"


def test_a_nested_repository_there_before_the_step_is_not_its_own(project: Path) -> None:
    from maker.executor.acceptance.review_route import review_need

    _nested_repository(project / "vendor/lib")
    store = _started(project)
    (project / "hello.txt").write_text("hello\n")
    accept_handoff(store, handoff(1, files_changed=["hello.txt"]))
    assert "repositories_added" not in store.read_handoff(1)
    assert review_need(store, store.load_step(1), "auto").route == "policy"


def test_a_nested_repository_named_to_inject_an_index_line_hides_nothing(
        project: Path) -> None:
    """Its path holds a line break and a tab (an index record of its own that would set
    setup.py back to its old blob): recorded as one path, the edit is still measured."""
    (project / "setup.py").write_text("print('ok')\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "add", "setup.py"], check=True)
    subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "base"], check=True)
    blob = subprocess.run(["git", "-C", str(project), "rev-parse", "HEAD:setup.py"],
                          capture_output=True, text=True, check=True).stdout.strip()
    store = write(project, [WRITER], policy="never")
    start_step(store, 1, session_id="sess-1")
    record_orient(store, 1, "none")
    (project / "setup.py").write_text("import os\n")
    _nested_repository(project / f"x\n100644 {blob}\tsetup.py")
    said = _refused(store, handoff(1, files_changed=["x"]))
    assert "setup.py" in said


def test_a_nested_repository_with_no_commit_is_not_measured_so_says_no(
        project: Path) -> None:
    """What it holds cannot be measured (git add fails on it too): a complete handoff
    is refused, never taken as NO FILE CHANGED."""
    store = _started(project)
    subprocess.run(["git", "init", "-q", str(project / "hidden")], check=True)
    (project / "hidden/payload.sh").write_text("evil\n")
    said = _refused(store, handoff(1, files_changed=[]))
    assert "cannot measure its end" in said


def test_a_measure_cut_short_still_looks_for_nested_repositories(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.executor.acceptance import accept
    from maker.handoff import measured

    monkeypatch.setattr(accept, "MAX_PATHS", 2)
    monkeypatch.setattr(measured, "MAX_PATHS", 2)
    store = _started(project)
    for name in ("a1", "a2", "a3"):
        (project / name).write_text("x\n")
    _nested_repository(project / "zz/lib")
    accept_handoff(store, handoff(1, files_changed=["a1", "a2", "a3", "zz/lib"]))
    assert store.read_handoff(1)["repositories_added"] == ["zz/lib"]
