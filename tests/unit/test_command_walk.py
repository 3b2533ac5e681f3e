"""The one walk of what a command line runs, and the three guards that are policies over
it (the executor's, the main agent's, the readers')."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from maker.tools.command.command_walk import Run, Unknown, walk
from maker.tools.command.readonly import why_not_read_only
from maker.tools.guards.decision_guard import decision_refusal
from maker.tools.guards.guard import bash_refusal


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "plans").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


def _maker_runs(command: str, cwd: Path) -> list[Run]:
    return [r for r in walk(command, cwd, home=cwd / "home").runs if r.runs_maker]


# (command, the maker command it runs, how): each spelling hides `maker step reset 1`
HIDDEN = [
    ("maker step reset 1", ""),
    ("/usr/local/bin/maker step reset 1", ""),
    ("env -S 'maker step reset 1'", "env"),
    ("env FOO=1 maker step reset 1", "env"),
    ("script -qc 'maker step reset 1' /dev/null", "script"),
    ("watch -n1 'maker step reset 1'", "watch"),
    ("ssh localhost 'maker step reset 1'", "ssh"),
    ("su -c 'maker step reset 1' me", "su"),
    ("nohup timeout 5 maker step reset 1", "nohup"),
    ("sudo -u me maker step reset 1", "sudo"),
    ("bash -c 'maker step reset 1'", "bash"),
    ("sh -xc 'true; maker step reset 1'", "sh"),
    ("eval 'maker step reset 1'", "eval"),
    ("eval maker step reset 1", "eval"),
    ("GIT_EDITOR='maker step reset 1' git commit", "GIT_EDITOR"),
    ("export BASH_ENV='maker step reset 1'", "BASH_ENV"),
    ("python3 -m maker step reset 1", "python -m"),
    ("trap 'maker step reset 1' EXIT", "trap"),
    ("alias m='maker step reset 1'", "alias"),
    ("function f { maker step reset 1; }; f", "function"),
    ("if true; then maker step reset 1; fi", ""),
    ("unshare -r sh -c 'maker step reset 1'", "sh"),
    ("cat <<'EOF' | sh -c 'maker step reset 1'\nx\nEOF", "sh"),
]


@pytest.mark.parametrize(("command", "via"), HIDDEN, ids=[c for c, _ in HIDDEN])
def test_the_walk_finds_maker_however_it_is_run(project: Path, command: str,
                                                via: str) -> None:
    runs = _maker_runs(command, project)
    assert [r.args for r in runs if r.args[:3] == ["step", "reset", "1"]], runs
    assert via in {r.via for r in runs}, [r.via for r in runs]


@pytest.mark.parametrize("command", [
    "find . -name x -exec maker step reset 1 \\;",
    "xargs maker step reset",
    "parallel maker step reset ::: 1",
])
def test_a_wrapper_that_adds_arguments_is_marked(project: Path, command: str) -> None:
    runs = _maker_runs(command, project)
    assert runs and all(r.guessed and r.appends for r in runs)


def test_cd_carries_the_directory_on_and_a_nested_shell_does_not(project: Path) -> None:
    runs = walk("cd sub && ls; bash -c 'cd /; pwd'; cat x", project).runs
    where = {r.name: r.cwd for r in runs}
    assert where["ls"] == where["cat"] == project / "sub"
    assert where["pwd"] == Path("/")
    runs = walk("eval 'cd sub'; cat x", project).runs  # (eval runs in the same shell)
    assert [r.cwd for r in runs if r.name == "cat"] == [project / "sub"]


@pytest.mark.parametrize(("command", "kind"), [
    ("echo $HOME", "expands"),
    ("echo `id`", "expands"),
    ("echo {a,b}", "braces"),
    ("ls ~+/plans", "tilde"),
    ("/usr/bin/mak?r step reset 1", "pattern"),
    ("cd $HOME", "cd"),
    ("cd ~-", "cd"),
    ("pushd", "cd"),
    ("pushd +1", "cd"),
    ("cat <<EOF\n$x\nEOF", "expands"),
    ("(ls)", "parens"),
    ("f() { ls; }", "parens"),
    ("function f { ls; }", "construct"),
    ("trap 'ls' EXIT", "construct"),
    ("alias l=ls", "construct"),
    ("source ./env.sh", "construct"),
    (". ./env.sh", "construct"),
    ("coproc ls", "construct"),
    ("echo ls | bash", "stdin"),
    ("cd -", "cd"),
    ("popd", "cd"),
    ("echo 'unclosed", "syntax"),
    ("echo a\x00b", "syntax"),
    ("ls # \x01", "control"),
])
def test_what_the_walk_cannot_follow_it_says(project: Path, command: str, kind: str) -> None:
    kinds = {u.kind for u in walk(command, project).unknowns}
    assert kind in kinds, kinds


def test_nesting_is_bounded(project: Path) -> None:
    command = "ls"
    for _ in range(8):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    assert "depth" in {u.kind for u in walk(command, project).unknowns}


def test_a_wrapper_given_thousands_of_arguments_is_guessed_a_bounded_number_of_times(
        project: Path) -> None:
    command = "env " + " ".join(["x"] * 10_000) + " maker step reset 1"
    walked = walk(command, project)
    guessed = [r for r in walked.runs if r.guessed]
    assert len(guessed) == 65 and guessed[-1].runs_maker  # (the first places, and maker)
    assert bash_refusal(command, cwd=project, plans_root=project / "plans", data_dirs=(),
                        home=project / "home") is not None
    many = "env " + " ".join(["x"] * 100) + " bash" * 100
    assert "wide" in {u.kind for u in walk(many, project).unknowns}


def test_a_cd_that_may_fail_leaves_both_folders(project: Path) -> None:
    for command in ("cd nowhere; rm -rf plans", "cd nowhere || rm -rf plans",
                    "cd README.md; rm -rf plans", "cd sub; rm -rf plans"):
        (rm,) = [r for r in walk(command, project).runs if r.name == "rm"]
        assert project in rm.cwds, command
        assert decision_refusal(command, cwd=project, plans_root=project / "plans")
    (rm,) = [r for r in walk("cd sub && rm -rf x", project).runs if r.name == "rm"]
    assert rm.cwds == (project / "sub",)
    link = project / "l"
    link.symlink_to("/tmp")
    (rm,) = [r for r in walk("cd l/.. && rm -rf plans", project).runs if r.name == "rm"]
    assert project in rm.cwds  # (bash's cd is logical: l/.. is where it started)
    assert decision_refusal("cd l/.. && rm -rf plans", cwd=project,
                            plans_root=project / "plans")


def test_inline_code_is_the_runs_code(project: Path) -> None:
    runs = walk("python3 -c 'open(\"plans/x\", \"w\")'; node -e 'x()'; "
                "python3 - <<'EOF'\nprint(1)\nEOF", project).runs
    assert [r.code for r in runs] == [('open("plans/x", "w")',), ("x()",), ("print(1)",)]


# -- the three policies, over the same walk ---------------------------------------------

def _three(project: Path, command: str) -> tuple[str | None, str | None, str | None]:
    plans = project / "plans"
    return (bash_refusal(command, cwd=project, plans_root=plans, data_dirs=(),
                         home=project / "home"),
            decision_refusal(command.replace("reset", "approve"), cwd=project,
                             plans_root=plans),
            why_not_read_only(command))


@pytest.mark.parametrize(("command", "via"), HIDDEN, ids=[c for c, _ in HIDDEN])
def test_every_guard_refuses_maker_hidden_in_a_command(project: Path, command: str,
                                                       via: str) -> None:
    executor, main, reader = _three(project, command)
    assert executor is not None and main is not None and reader is not None


@pytest.mark.parametrize("command", [
    "pytest -q tests", "git diff --stat", "ls -la | grep x", "rg -n foo src",
    "cat README.md | head -5", "git log --oneline -3",
])
def test_ordinary_reading_passes_every_guard(project: Path, command: str) -> None:
    assert _three(project, command)[:2] == (None, None)
    if not command.startswith("pytest"):
        assert _three(project, command)[2] is None


@given(st.text(max_size=120))
def test_the_walk_never_raises(command: str) -> None:
    walked = walk(command, Path("/tmp"), home=Path("/tmp"))
    assert all(isinstance(s, (Run, Unknown)) for s in walked.steps)


@given(st.text(alphabet=" \n;|&()'\"\\$`{}<>#=-~*mkaerstpbhcvl.", max_size=80))
def test_no_guard_raises_on_shell_shaped_text(command: str) -> None:
    plans = Path("/tmp/maker-walk-test/plans")
    bash_refusal(command, cwd=Path("/tmp"), plans_root=plans, data_dirs=(), home=Path("/tmp"))
    decision_refusal(command, cwd=Path("/tmp"), plans_root=plans)
    why_not_read_only(command)


# -- a hostile reading's findings, kept ---------------------------------------------------

MAIN_REFUSES = [
    "bash <<< \"maker step appr''ove 1\"",
    "xargs -I{} sh -c {} <<< \"maker step appr''ove 1\"",
    "cat <<< \"maker step appr''ove 1\" | bash",
    "printf 'maker step appro%s 1' ve | sh",
    "bash <<< 'rm -rf plans'",
    "bash <<'EOF'\nmaker step appr''ove 1\nEOF",
    "$'\\x6dak\\x65r' step approve 1 # \x01",
    "bash -c \"maker step appr''ove 1\" # \x01",
    "rm -rf plans # \x01",
    "echo x > plans/PLAN.md\r",
    "rm -rf plans \\",
    "bash -c 'rm -rf plans \\'",
    "cd nowhere; rm -rf plans",
    "cd nowhere || rm -rf plans",
    "pushd; rm -rf plans",
    "cd ~+ && rm -rf plans",
    "cd $PWD && rm -rf plans",
    "cd `pwd` && rm -rf plans",
    "CDPATH=/tmp cd project && rm -rf plans",
    "php -r 'system(\"rm -rf plans\");'",
    "/usr/local/bin/mak?r step approve 1",
    "ma{k,}er step approve 1",
]


@pytest.mark.parametrize("command", MAIN_REFUSES)
def test_the_main_agents_guard_refuses_what_it_once_missed(project: Path, command: str) -> None:
    assert decision_refusal(command, cwd=project, plans_root=project / "plans")


MAIN_PASSES = [
    "cat > notes.md <<'EOF'\nThe person approves each maker step.\nEOF",
    "git commit -q -F - <<'EOF'\nmaker: approve flow fixed\nEOF",
    "ls src/maker/tools/{guard,readonly}.py",
    "source .venv/bin/activate && maker status",
    ". .venv/bin/activate && pytest tests/maker",
    "mkdir -p tests/{unit,integration} && touch src/maker/x.py",
    "cd sub && make test",
]


@pytest.mark.parametrize("command", MAIN_PASSES)
def test_the_main_agents_ordinary_work_passes(project: Path, command: str) -> None:
    assert decision_refusal(command, cwd=project, plans_root=project / "plans") is None


EXECUTOR_REFUSES = [
    "python3 -W ignore -m maker step approve 1",
    "python3 -Im maker step approve 1",
    "bash -c -- 'rm -rf plans'",
    "bash -o pipefail -c 'maker step reset 1'",
    "perl -E 'unlink \"plans/PLAN.md\"'",
    "lua -e 'os.execute(\"rm -rf plans\")'",
    "ssh -oProxyCommand='sh -c \"rm -rf plans\"' host",
    "rsync -e 'sh -c \"maker step reset 1\"' a b",
    "cd nowhere; rm -rf plans",
]


@pytest.mark.parametrize("command", EXECUTOR_REFUSES)
def test_the_executors_guard_refuses_what_it_once_missed(project: Path, command: str) -> None:
    assert bash_refusal(command, cwd=project, plans_root=project / "plans", data_dirs=(),
                        home=project / "home")


@pytest.mark.parametrize("command", [
    "timeout 600 pytest " + " ".join(f"tests/test_{i}.py" for i in range(70)),
    "uv run ruff check " + " ".join(f"src/m{i}.py" for i in range(70)),
    "mkdir build && cd build && cmake ..",
    "cd sub && pytest -q",
])
def test_the_executors_ordinary_work_passes(project: Path, command: str) -> None:
    assert bash_refusal(command, cwd=project, plans_root=project / "plans", data_dirs=(),
                        home=project / "home") is None


def test_a_long_run_of_cds_is_bounded(project: Path) -> None:
    walked = walk("cd sub; " * 3000 + "true", project)
    assert "cd" in {u.kind for u in walked.unknowns}
    assert all(len(r.cwds) <= 8 for r in walked.runs)


# -- a second hostile reading's findings, kept ----------------------------------------------

@pytest.mark.parametrize("command", [
    "setpriv maker step done 1",
    "prlimit --nofile=10 maker step done 1",
    "bash /opt/maker/bin/maker step done 1",
    "/opt/maker/scripts/launch -m maker step done 1",
    "python3 -I -S /opt/maker/scripts/run_module.py -m maker step done 1",
    "python3 -m cProfile -m maker step done 1",
    "coverage run -m maker step done 1",
    "make -f - <<'MK'\nall:\n\tmaker \"step\" done 1\nMK",
    "busybox sh -c 'maker \"step\" done 1'",
    "cd \ud800; ls",
])
def test_the_executors_guard_refuses_what_a_second_reading_found(project: Path,
                                                                 command: str) -> None:
    assert bash_refusal(command, cwd=project, plans_root=project / "plans", data_dirs=(),
                        home=project / "home")


def test_text_that_is_not_unicode_is_refused_not_crashed_on(project: Path) -> None:
    for command in ("cd \ud800; maker step approve 1", "cat \ud800/x", "tee\ud800 plans/x"):
        assert decision_refusal(command, cwd=project, plans_root=project / "plans")
        assert why_not_read_only(command)


def test_patterns_matching_many_files_are_bounded(project: Path) -> None:
    many = project / "many"
    many.mkdir()
    for i in range(2100):
        (many / f"f{i}").write_text("")
    plans = project / "plans"
    assert decision_refusal("ls many/* many/*", cwd=project, plans_root=plans) is None
    refused = decision_refusal("rm -f many/* many/*", cwd=project, plans_root=plans)
    assert refused and "patterns match over 2000 files" in refused
