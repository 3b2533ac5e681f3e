"""How ``maker demo`` talks: one voice for both demos, the plugin's and the headless one.

Every line is ``  WHO       TEXT``, wrapped to the terminal's usual width; ``quiet``
keeps only the lines marked essential (the prompts, outcomes and files).
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

from maker_scripted.replies import ToolUseBlock

__all__ = ["WIDTH", "Echo", "Say", "claude_version", "clip", "describe_call", "project_files"]

Echo = Callable[[str], None]
WIDTH = 78


class Say:
    """Everything a demo prints, in one voice; ``quiet`` keeps the essentials."""

    def __init__(self, echo: Echo, quiet: bool) -> None:
        self.echo = echo
        self.quiet = quiet

    def line(self, who: str, text: str, *, essential: bool = False) -> None:
        if self.quiet and not essential:
            return
        lines = text.split("\n")
        head = textwrap.wrap(lines[0], WIDTH - 12, break_on_hyphens=False) or [""]
        self.echo(f"  {who:<9} {head[0]}")
        for more in head[1:]:
            self.echo(f"  {'':<9} {more}")
        for more in lines[1:]:
            for part in textwrap.wrap(more, WIDTH - 14, subsequent_indent="  ",
                                      break_on_hyphens=False) or [""]:
                self.echo(f"  {'':<9}   {part}")

    def heading(self, number: int, total: int, title: str) -> None:
        self.rule(f"{number}/{total}  {title}")

    def rule(self, title: str) -> None:
        head = f"== {title} "
        self.echo("")
        self.echo(head + "=" * max(0, WIDTH - len(head)))

    def paragraph(self, text: str, *, essential: bool = False) -> None:
        if essential or not self.quiet:
            self.echo(textwrap.fill(text, WIDTH))

    def bullet(self, text: str) -> None:
        if not self.quiet:
            self.echo(textwrap.fill(text, WIDTH, initial_indent="- ", subsequent_indent="  "))

    def quoted(self, lines: list[str]) -> None:
        """Lines a program printed, verbatim (never wrapped: tables keep their columns)."""
        for line in lines:
            self.echo(f"  {'':<9} | {line}")

    def files(self, written: list[str]) -> None:
        if written:
            self.line("files", "new: " + ", ".join(written), essential=True)

    def excerpt(self, rel: str, text: str, *, start: str = "", limit: int = 14) -> None:
        """``limit`` lines of a file, from the line ``start`` (when given and found)."""
        if self.quiet:
            return
        lines = text.rstrip("\n").splitlines()
        first = next((i for i, line in enumerate(lines) if start and line == start), 0)
        shown = lines[first:first + limit]
        self.line("excerpt", f"{rel}, lines {first + 1}-{first + len(shown)} of {len(lines)}:")
        self.quoted(shown)


def describe_call(call: ToolUseBlock) -> str:
    """A tool call in a few words: ``Write hello.txt``, ``Bash: maker status``."""
    args = call.input
    if call.name == "Agent":
        prompt = str(args.get("prompt", "")).replace("\n", " ")
        return (f"Agent {args.get('subagent_type')} (foreground) with the prompt "
                f"{clip(prompt, 60)!r}")
    if call.name == "Bash":
        return f"Bash: {args.get('command')}"
    if call.name in ("Write", "Read", "Edit"):
        return f"{call.name} {Path(str(args.get('file_path', ''))).name}"
    return call.name


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def claude_version(claude: Path) -> str:
    """The CLI's version (``2.1.330``), or ``(unknown version)``."""
    try:
        out = subprocess.run([str(claude), "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out.split()[0] if out else "(unknown version)"


def project_files(project: Path) -> list[str]:
    """The project's files (no .git, no maker state), relative, sorted."""
    out = []
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project).as_posix()
        if path.is_file() and not rel.startswith((".git/", "plans/.maker/")):
            out.append(rel)
    return out


def demo_workspace(prefix: str) -> tuple[Path, Path, Path]:
    """``(workdir, project, home)`` for one demo: a new temporary folder holding a fresh
    project (``scenarios.new_project``) and the Claude Code home its CLI runs with."""
    import tempfile

    from maker_scripted.scenarios import new_project

    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    project = new_project(workdir / "project")
    home = workdir / "claude-home"
    home.mkdir()
    return workdir, project, home
