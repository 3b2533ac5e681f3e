"""The step executor's guard (maker.tools.guards.guard), driven with plain values.

Every way of moving the plan's state or touching maker's files that was once let
through is refused with a reason; what an executor legitimately runs still passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maker.tools.guards.guard import bash_refusal, executor_refusal

STATE = "does not move the plan's state"
PLANS = "maker's own record of the plan"
DATA = "maker's own data"
UNCLEAR = "maker cannot check this command"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    for d in ("plans/steps", "plans/.maker/evidence", "src", "docs/plans", "build"):
        (root / d).mkdir(parents=True)
    (root / "plans/PLAN.md").write_text("# plan\n")
    (root / "plans-link").symlink_to(root / "plans")
    return root


def refusal(project: Path, command: str) -> str | None:
    return bash_refusal(command.replace("{root}", str(project)), cwd=project,
                        plans_root=project / "plans", data_dirs=(project.parent / "data",),
                        home=project.parent)


REFUSED = [
    # Commands a hostile executor used, each let through by the string matcher before.
    ('touch "$PWD/plans/PWNED"', UNCLEAR),
    ('"maker" step reset 0', STATE),
    ("$(which maker) status", UNCLEAR),
    ("cd pl*ns && ls", UNCLEAR),
    ('head -3 "$PWD"/plans/PLAN.md', UNCLEAR),
    (r"m\aker step approve 0", STATE),
    ("rm -rf ./pla?s", UNCLEAR),
    # Their relatives: the program however named, wrapped or run.
    ("`which maker` step approve 0", UNCLEAR),
    ("env maker step approve 0", STATE),
    ("env -i FOO=1 maker step approve 0", STATE),
    ("/abs/path/to/bin/maker step approve 0", STATE),
    ("./bin/maker step approve 0", STATE),
    ("maker 'step' approve 0", STATE),
    ("python -m maker step approve 0", STATE),
    ("python3 -mmaker.cli.main step approve 0", STATE),
    ("python -c 'from maker.cli.main import main; main()' step approve 0", STATE),
    ("bash -c 'maker step approve 0'", STATE),
    ("sh -ec 'pytest; maker step approve 0'", STATE),
    ("bash -c \"eval 'maker step approve 0'\"", STATE),
    ("eval maker step approve 0", STATE),
    ("echo 'maker step approve 0' | bash", UNCLEAR),
    ("sh <<'EOF'\nmaker step approve 0\nEOF", STATE),  # (the here-document it runs)
    ("cat <<EOF\n$(maker step approve 0)\nEOF", UNCLEAR),
    ("timeout 5 maker step approve 0", STATE),
    ("nohup nice -n 5 maker step approve 0", STATE),
    ("sudo -u me maker step approve 0", STATE),
    ("uv run maker step approve 0", STATE),
    ("echo 0 | xargs maker step approve", STATE),
    ("find . -name x -exec maker step approve 0 \\;", STATE),
    ("if true; then maker step approve 0; fi", STATE),
    ("pytest -q && maker step approve 0", STATE),
    ("pytest -q; maker step reset 0 # just a comment", STATE),
    ("(maker step approve 0)", UNCLEAR),
    ("TEST_CMD=true maker step approve 1", STATE),
    ("TEST_CMD=true maker verify --step 1", STATE),
    ("maker step start 1", STATE),
    ("maker handoff accept h.yaml", STATE),
    ("maker plan write -", STATE),
    ("maker run", STATE),
    ("cp /opt/bin/maker /tmp/mk", STATE),
    # Variables, globs and braces that could name maker or plans/.
    ("M=maker; $M step approve 0", UNCLEAR),
    ("ls ${D}", UNCLEAR),
    ('cat "$HOME/x"', UNCLEAR),
    ("ls {plans,src}", UNCLEAR),
    ("rm -rf *", UNCLEAR),
    ("cat p*/PLAN.md", UNCLEAR),
    ("cat {root}/pla[n]s/PLAN.md", UNCLEAR),
    # plans/ named directly: read, write, link, copy, move, cd, delete.
    ("cat plans/PLAN.md", PLANS),
    ("cat ./plans/.maker/active.json", PLANS),
    ("cat < plans/PLAN.md", PLANS),
    ("echo x > plans/PWNED", PLANS),
    ("echo x >> {root}/plans/.maker/evidence/step-01.json", PLANS),
    ("pytest 2> plans/log", PLANS),
    ("sed -i s/pending/complete/ plans/steps/01-x.md", PLANS),
    ("ln -s plans p", PLANS),
    ("cp x.md plans/", PLANS),
    ("mv x.md plans/steps/01-x.md", PLANS),
    ("cd plans", PLANS),
    ("cd src && cat ../plans/PLAN.md", PLANS),
    ("cd src; rm -rf ../plans", PLANS),
    ("cat plans-link/PLAN.md", PLANS),
    ("cat src/../plans/PLAN.md", PLANS),
    ("touch --reference=plans/PLAN.md x", PLANS),
    ("rm -rf .", PLANS),
    ("rm -rf {root}", PLANS),
    ("find . -delete", PLANS),
    ("git clean -fdx", PLANS),
    ("python3 - <<'EOF'\nopen('plans/x', 'w').write('')\nEOF", PLANS),
    ("python -c \"import shutil; shutil.rmtree('plans')\"", PLANS),
    # maker's data dir, where the sealing key lives.
    ("cat ~/data/seal.key", DATA),
    ("cat {root}/../data/seal.key", DATA),
    # What cannot be parsed or followed.
    ('ls "unclosed', UNCLEAR),
    ("cd -", UNCLEAR),
    ("ls \x00", UNCLEAR),
]

ALLOWED = [
    "pytest -q", "git diff", "npm test", "ls src", "cat README.md", "python -m pytest",
    "maker verify --step 1", "maker context 1", "maker status", "maker next",
    "maker handoff check h.yaml", "maker plan show", "maker --help",
    "pytest -q 2>&1 | tail -5", "cd src && ls", "cd src", "ls docs/plans",
    "cat > hello.py <<'EOF'\nprint('hi $x')\nEOF",
    'git add -A && git commit -m "fix the thing"', "echo done > /dev/null",
    "rm -rf build", "rm -rf src/*.pyc", "ls *.py", "grep -rn maker src",
    'python -c "print(1)"', "mkdir -p src/pkg && touch src/pkg/__init__.py",
    "awk '{print $1}' x", "make test", "cargo test", "go test ./...", "npx jest",
    "timeout 60 pytest -q", "env FOO=1 pytest", "git log --oneline | head -5",
    "watch -n 1 'ls -la'", "env -S 'pytest -q'", 'git commit -m "maker: context for step 1"',
]


@pytest.mark.parametrize(("command", "reason"), REFUSED)
def test_every_bypass_is_refused_with_a_reason(project: Path, command: str,
                                               reason: str) -> None:
    why = refusal(project, command)
    assert why is not None and reason in why, why


@pytest.mark.parametrize("command", ALLOWED)
def test_what_the_executor_needs_still_runs(project: Path, command: str) -> None:
    assert refusal(project, command) is None


@pytest.mark.parametrize(("tool", "key", "path", "reason"), [
    ("Write", "file_path", "plans/steps/01-x.md", PLANS),
    ("Edit", "file_path", "{root}/plans/handoffs/x.md", PLANS),
    ("MultiEdit", "file_path", "plans-link/PLAN.md", PLANS),
    ("NotebookEdit", "notebook_path", "plans/x.ipynb", PLANS),
    ("Write", "file_path", "{root}/../data/seal.key", DATA),
    ("Read", "file_path", "{root}/../data/seal.key", DATA),
    ("Write", "file_path", "src/app.py", None),
    ("Read", "file_path", "plans/PLAN.md", None),  # reading by Read is the step's tool
    ("Grep", "path", "src", None),
])
def test_file_tools(project: Path, tool: str, key: str, path: str,
                    reason: str | None) -> None:
    why = executor_refusal(tool, {key: path.replace("{root}", str(project))}, cwd=project,
                           plans_root=project / "plans",
                           data_dirs=(project.parent / "data",))
    assert (why is None) if reason is None else (why is not None and reason in why), why


# -- properties --------------------------------------------------------------------------


def _quoted(word: str, how: list[int]) -> str:
    """``word`` with each character written plainly, escaped, or in quotes."""
    out = []
    for ch, h in zip(word, how, strict=False):
        out.append([ch, "\\" + ch, f"'{ch}'", f'"{ch}"'][h % 4])
    return "".join(out) + word[len(how):]


_WRAPS = st.sampled_from(["", "env ", "command ", "nohup ", "timeout 9 ", "sudo ",
                          "/usr/local/bin/", "./", "time ", "pytest -q && ", "true; ",
                          "uv run ", "exec ", "! "])
_MOVES = st.sampled_from([["step", "approve", "0"], ["step", "reset", "0"],
                          ["step", "start", "1"], ["handoff", "accept", "-"],
                          ["plan", "write", "-"], ["step", "fail", "0"]])


@settings(max_examples=300, deadline=None)
@given(wrap=_WRAPS, move=_MOVES, data=st.data())
def test_any_spelling_of_a_state_move_is_refused(project: Path, wrap: str, move: list[str],
                                                 data: st.DataObject) -> None:
    words = ["maker", *move]
    hows = st.lists(st.integers(0, 3), max_size=12)
    command = wrap + " ".join(_quoted(w, data.draw(hows)) for w in words)
    why = refusal(project, command)
    assert why is not None and STATE in why, command


_INTO_PLANS = st.sampled_from(["plans", "plans/", "./plans/PLAN.md", "plans/.maker/x",
                               "src/../plans/steps", "{root}/plans/handoffs/h.md",
                               "plans-link", "plans-link/x", "./src/../plans"])
_PROGRAMS = st.sampled_from(["cat", "touch", "rm -rf", "cp x", "ln -s", "mv x", "cd",
                             "echo x >", "echo x >>", "tee", "sed -i s/a/b/", "ls", "chmod 0",
                             "git add", "cat <", "head -3"])


@settings(max_examples=300, deadline=None)
@given(program=_PROGRAMS, target=_INTO_PLANS, data=st.data())
def test_any_path_into_plans_is_refused(project: Path, program: str, target: str,
                                        data: st.DataObject) -> None:
    path = target.replace("{root}", str(project))
    command = f"{program} {_quoted(path, data.draw(st.lists(st.integers(0, 3), max_size=40)))}"
    why = bash_refusal(command, cwd=project, plans_root=project / "plans",
                       data_dirs=(project.parent / "data",), home=project.parent)
    assert why is not None and PLANS in why, command


@settings(max_examples=300, deadline=None)
@given(command=st.text(max_size=80))
def test_the_guard_never_raises(project: Path, command: str) -> None:
    why = refusal(project, command)
    assert why is None or why.startswith("maker")


@pytest.mark.parametrize(("tool", "where"), [
    ("Grep", "{home}/.local/share"), ("Glob", "{home}"), ("LS", "{home}/.local"),
    ("Grep", ""),  # (no path: where it runs, here the home folder)
])
def test_a_search_of_a_folder_that_holds_makers_data_is_refused(
        tmp_path: Path, tool: str, where: str) -> None:
    """Grep, Glob and LS read every file below the path they are given: the sealing key
    too, when the path is a folder above maker's data."""
    from maker.tools.guards.guard import executor_refusal

    home = tmp_path / "home"
    data = home / ".local/share/maker"
    data.mkdir(parents=True)
    (tmp_path / "project/plans").mkdir(parents=True)
    path = where.format(home=home)
    said = executor_refusal(tool, {"pattern": ".", "path": path}, cwd=home,
                            plans_root=tmp_path / "project/plans", data_dirs=(data,),
                            home=home)
    assert said is not None and "maker's own data" in said
    assert executor_refusal(tool, {"pattern": ".", "path": str(tmp_path / "project")},
                            cwd=home, plans_root=tmp_path / "project/plans",
                            data_dirs=(data,), home=home) is None
