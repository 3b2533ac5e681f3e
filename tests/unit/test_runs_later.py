"""The file tools write nothing that runs code later outside the box (the client's
settings and MCP servers, any repository's git config and hooks, what tools run on their
own, maker's own program) unless the plan's step names it in `writes`: what Bash cannot
write in the kernel box, the file tools cannot either."""

from __future__ import annotations

from pathlib import Path

import pytest

from maker.tools.guards.executor_rules import executor_decision

LATER = "runs later, outside its box"


class _Spec:
    def __init__(self, writes: list[str] | None = None) -> None:
        self.step, self.tools, self.writes = 3, ["Write", "Edit", "NotebookEdit", "Read"], writes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project" / "plans" / "steps").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return tmp_path / "project"


def decide(project: Path, tool: str, path: str, writes: list[str] | None = None) -> str | None:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return executor_decision(_Spec(writes), tool, {key: path, "content": "x"}, cwd=project,
                             plans_root=project / "plans", data_dirs=(),
                             home=project.parent / "home")


@pytest.mark.parametrize("path", [
    ".claude/settings.local.json", ".claude/settings.json", "sub/.claude/agents/a.md",
    ".claude/commands/x.md", ".claude/hooks/h.sh", ".mcp.json", "sub/.mcp.json",
    "vendor/lib/.git/config", "vendor/lib/.git/hooks/post-checkout", "vendor/lib/.git",
    ".gitmodules", ".envrc", "web/.envrc", ".pre-commit-config.yaml", "lefthook.yml",
    "lefthook-local.yaml", ".lefthook/pre-commit/x.sh", ".husky/pre-commit",
    ".githooks/pre-push", ".vscode/tasks.json", ".devcontainer/devcontainer.json",
    ".devcontainer.json", ".npmrc", ".yarnrc.yml", "bunfig.toml", ".pnpmfile.cjs",
    ".venv/lib/python3.12/site-packages/zz.pth", "../home/.claude/settings.json",
    "../home/.claude.json", "../home/.claude/agents/x.md", ".idea/workspace.xml",
    "../home/.local/bin/maker", "../home/.local/bin/git", "../home/bin/git",
    "vendor/bare/HEAD", "sub/head",  # (a folder made a bare repository, its config run)
])
@pytest.mark.parametrize("tool", ["Write", "Edit", "NotebookEdit"])
def test_a_file_that_runs_code_later_is_not_written(project: Path, path: str,
                                                    tool: str) -> None:
    why = decide(project, tool, path)
    assert why is not None and LATER in why and "`writes`" in why, why


def test_the_plugins_own_program_is_not_written(project: Path) -> None:
    plugin = Path(__file__).resolve().parents[2]  # (this checkout: maker's program)
    for name in ("hooks/hooks.json", "commands/run.md", "agents/planner.md", "bin/maker",
                 "src/maker/hooks/wake.py"):
        why = decide(project, "Write", str(plugin / name))
        assert why is not None and "maker's own program" in why, name


@pytest.mark.parametrize("path", [
    "src/app.py", "docs/claude.md", ".github/workflows/ci.yml", "README.md",
    "claude/settings.json", "notes/.claude.md", "src/mcp.json", "pth.py", ".gitignore",
    "src/head.py", "docs/HEAD.md", "src/objects/a.py", "src/refs/b.py",
])
def test_ordinary_files_are_written(project: Path, path: str) -> None:
    assert decide(project, "Write", path) is None


@pytest.mark.parametrize(("writes", "path", "allowed"), [
    ([".envrc"], ".envrc", True),
    ([".vscode/"], ".vscode/settings.json", True),
    ([".claude/agents/*.md"], ".claude/agents/a.md", True),
    ([".claude/agents/*.md"], ".claude/settings.json", False),
    (["**"], ".claude/settings.json", False),  # (no name: not named)
    (["src/**"], ".mcp.json", False),
    ([".mcp.json"], ".mcp.json", True),
])
def test_a_step_that_names_the_file_in_writes_may_write_it(
        project: Path, writes: list[str], path: str, allowed: bool) -> None:
    assert (decide(project, "Write", path, writes) is None) is allowed


def test_reading_them_is_not_refused(project: Path) -> None:
    assert decide(project, "Read", ".claude/settings.json") is None


# -- what a hostile review found (each was let through) ---------------------------------


@pytest.mark.parametrize("path", [
    ".Claude/settings.json", ".MCP.json", ".Git/hooks/pre-commit", ".GIT/config",  # (any case:
    # a file system that ignores case reads them as the protected ones)
    "lefthook.toml", "lefthook.json", "lefthook.jsonc", "lefthook-local.toml",
    ".config/lefthook-local.toml", ".lefthook-local/pre-commit/x.sh", ".pnpmfile.mjs",
    "pip.ini", ".pre-commit-config.yml",
    # (editors and tools that run what a folder's file says when started or entered there)
    "mise.toml", ".mise.local.toml", "mise.local.toml", ".mise/tasks/build", ".nvim.lua",
    ".exrc", ".nvimrc", ".cargo/config.toml", ".zed/tasks.json",
])
def test_every_spelling_is_refused(project: Path, path: str) -> None:
    why = decide(project, "Write", path)
    assert why is not None and LATER in why, path


@pytest.mark.parametrize("path", [
    "../other/.claude/settings.json", "../other/.git/hooks/pre-commit",
    "../home/repos/x/.claude/settings.json", "../home/.gitconfig", "../home/.bashrc",
    "../home/.config/git/config",
])
def test_outside_the_project_every_folder_on_the_way_counts(project: Path, path: str) -> None:
    why = decide(project, "Write", path)
    assert why is not None and (LATER in why), path


def test_a_link_into_another_repositorys_claude_folder_is_refused(project: Path) -> None:
    other = project.parent / "other" / ".claude"
    other.mkdir(parents=True)
    (project / "outlink").symlink_to(other)
    assert decide(project, "Write", "outlink/settings.json") is not None


@pytest.mark.parametrize(("writes", "path"), [
    (["**/.git*"], "sub/.git/hooks/pre-commit"),
    ([".git*"], ".gitmodules"),
    (["*"], ".envrc"),
    (["**/*.json"], ".claude/settings.json"),
])
def test_a_wildcard_never_names_a_protected_file(project: Path, writes: list[str],
                                                 path: str) -> None:
    assert decide(project, "Write", path, writes) is not None


@pytest.mark.parametrize("path", ["model.pth", "checkpoints/epoch_3.pth", "src/.gitignore"])
def test_an_ordinary_file_with_a_like_name_is_written(project: Path, path: str) -> None:
    assert decide(project, "Write", path) is None


def test_a_path_with_a_nul_byte_is_refused_not_a_traceback(project: Path) -> None:
    why = decide(project, "Write", "src/a\0.py")
    assert why is not None and "NUL" in why


def test_the_boxs_names_are_names_with_one_star_at_most() -> None:
    """The box matches them without fnmatch (its import costs every boxed call): a name,
    one `*` in it at most; lower case, as it lowers what it finds; `name/` a folder's."""
    from maker.tools.box.box_sites import matches
    from maker.tools.box.runs_later import anywhere, at_the_top

    names = at_the_top(Path("/nowhere"))
    assert ".mcp.json" in names and "lefthook*.yml" in names and ".claude" not in names
    deeper = anywhere()
    assert {".claude/", ".git/", ".git", ".envrc", "head"} <= set(deeper)
    assert not {".git", ".git/", "head"} & set(anywhere(nested=True))
    for name in (*names, *deeper):
        assert name == name.lower() and name.count("*") <= 1, name
        assert not set(name) & set("?[]!"), name
    assert matches("lefthook-local.yml", "lefthook*.yml")
    assert not matches("lefthook_utils.py", "lefthook*.yml")
    assert matches("mise.local.toml", "mise.*toml") and not matches("mise.rs", "mise.*toml")


def test_the_folder_core_hookspath_names_is_protected(project: Path) -> None:
    """git runs the hooks there on the person's next commit: the file tools may not write
    them (read from the repository's config as text: no git runs)."""
    (project / ".git").mkdir()
    (project / ".git/config").write_text("[core]\n\tbare = false\n\thooksPath = tools/hooks\n")
    why = decide(project, "Write", "tools/hooks/pre-commit")
    assert why is not None and "core.hooksPath" in why
    assert decide(project, "Write", "tools/build.sh") is None
    assert decide(project, "Write", "tools/hooks/pre-commit", writes=["tools/hooks/**"]) \
        is None


def test_a_project_that_is_the_home_folder_keeps_the_start_up_files(project: Path) -> None:
    home = project  # (the project is the person's home folder)
    why = executor_decision(_Spec(None), "Write", {"file_path": ".bashrc", "content": "x"},
                            cwd=project, plans_root=project / "plans", data_dirs=(),
                            home=home)
    assert why is not None and "shell start-up" in why
    assert executor_decision(_Spec(None), "Write", {"file_path": "notes.md", "content": "x"},
                             cwd=project, plans_root=project / "plans", data_dirs=(),
                             home=home) is None


@pytest.mark.parametrize("path", ["build/CACHEDIR.TAG", "tools/pyvenv.cfg",
                                  "sub/rust-toolchain.toml", "sub/.dir-locals.el"])
def test_a_mark_the_box_passes_by_or_a_toolchain_is_not_the_file_tools_to_write(
        project: Path, path: str) -> None:
    """A venv's or a cache's mark makes the box's walk pass its folder by: a step's file
    tools may not make one (its commands may: a venv, a cache, made then, is walked)."""
    assert decide(project, "Write", path) is not None
