"""The step executor's Bash commands: a policy over what they run.

A command is read by ``maker.tools.command.command_walk`` (through the shell lexer, never as raw
text), which turns it into the programs it runs, wrappers, nested command lines and
interpreters included, and says what it cannot follow. This policy refuses all it cannot
follow (``$`` expansions and backticks, brace expansion, subshells, functions, traps,
aliases, ``source``, a shell reading stdin, a ``cd`` it cannot resolve), and checks each
program: of maker's own commands only ``maker.tools.command.maker_commands.EXECUTOR_COMMANDS``
may run, each directly; of git's, none that changes the person's refs or history
(``maker.tools.guards.git_rules``); no word, redirection or inline code may name ``plans/`` or
maker's data (``maker.tools.box.protected``); nothing copies, extracts or deletes over them
(``maker.tools.guards.spill``).

It is the fast first answer and the fallback: where the OS allows, the kernel is the
boundary (``maker.tools.box.boundary``).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from maker.tools.box.protected import Protected, expansion, resolve, unclear
from maker.tools.command.command_walk import Run, Unknown, walk
from maker.tools.command.maker_commands import EXECUTOR_COMMANDS, is_allowed, listed
from maker.tools.command.shell import Refused, tilde
from maker.tools.guards.git_rules import git_refusal, git_subcommand, sets_git_config
from maker.tools.guards.spill import spill_reason

__all__ = ["BashGuard"]

_STATE = ("maker: the step executor does not move the plan's state (`maker step …`, `maker "
          "handoff accept`, `maker plan write`, …, however the program is named or "
          "wrapped): your final message, the handoff, is how this step ends. Of maker's "
          f"commands it may run {listed(EXECUTOR_COMMANDS)}, each directly.")
_COPIERS = frozenset({"cp", "ln", "install", "mv", "rsync", "scp", "dd", "tee"})
# Programs that delete or move what they name: naming a directory that holds plans/ is
# naming plans/.
_DESTROYERS = frozenset({"rm", "rmdir", "mv", "shred", "chmod", "chown", "chgrp",
                         "rsync", "unlink", "truncate"})
_EXPANDS = frozenset({"expands", "braces", "tilde", "pattern"})
_CODE_TOKEN = re.compile(r"[^\s'\"`=,;:()\[\]{}<>|&+]+")
# maker's state-moving commands inside one word (a string a program may run: `env -S`,
# `script -c`, `watch`, `xargs sh -c`).
_STATE_WORDS = re.compile(r"(?<![\w.-])maker(?:\.exe)?['\"]?\s+['\"]?(?:step|handoff|plan|"
                          r"policy|proposal|approve|reject|adopt)\b")


class BashGuard(Protected):
    """``Protected``'s places, checked in a Bash command and whatever it runs."""

    def __init__(self, plans_root: Path, data_dirs: tuple[Path, ...] | None,
                 home: Path | None, workspace: Path | None = None, *,
                 step: int | None = None, boxed: bool = False) -> None:
        super().__init__(plans_root, data_dirs, home, workspace)
        self.step = step  # the executor's own step: `maker land` lands no other
        # The command runs in the step's OS boundary, where maker's state and key are out
        # of its reach: a string that names a maker command (a grep pattern, a commit
        # message) is text, not a way round (what it would run there changes nothing).
        self.boxed = boxed

    def bash(self, command: str, cwd: Path) -> str | None:
        """Why ``command``, run in ``cwd``, is refused; None when it may run."""
        walked = walk(command, cwd, home=self.home)
        try:
            for step in walked.steps:  # (first what it cannot follow, and maker's runs)
                if isinstance(step, Unknown):
                    shown = expansion if step.kind in _EXPANDS else unclear
                    raise Refused(shown(step.what, step.fix))
                if step.runs_maker:
                    self._maker(step)
            for run in walked.runs:
                self._run(run)
            if not self.boxed and any(_STATE_WORDS.search(text)
                                      for text in (*walked.texts, *walked.bodies)):
                raise Refused(_STATE + " (Not in a string another program runs either.)")
        except Refused as refused:
            return refused.reason
        return None

    def _run(self, run: Run) -> None:
        """Check one program the command runs, in each folder it may run in."""
        for assignment in run.assignments:
            if assignment.startswith("GIT_CONFIG"):
                raise Refused(unclear(f"`{assignment.partition('=')[0]}` gives git settings, "
                                      "which may name a program it runs", "use `git -c "
                                      "user.name=…` for what the step needs, or leave it to "
                                      "a person"))
        for cwd in run.cwds:
            self._run_in(run, cwd)

    def _run_in(self, run: Run, cwd: Path) -> None:
        if not run.guessed:  # (a guess's words are its wrapper's, checked there)
            for word in (*run.others, *run.words):
                self.check_word(tilde(word, self.home), cwd, glob=word.globs)
        if not run.argv:
            return
        name, args = run.name, run.args
        if self.workspace and not self.in_workspace(cwd) and name not in ("cd", "pushd") \
                and not run.runs_maker:
            raise Refused(self.workspace_text() + f" Run it there: `cd {self.workspace[0]} "
                          f"&& {' '.join(run.argv)[:80]}`.")
        if name == "git":
            self._git(args)
        spilled = spill_reason(name, args, cwd, self.plans_root, data_dirs=self.data_dirs,
                               workspace=self.workspace[0] if self.workspace else None)
        if spilled:
            raise Refused(f"maker: {spilled}.")
        if name in ("ln", "cp") and self.workspace:
            self._link_targets(name, args, cwd)
        if name in _COPIERS and any(_maker_name(a) for a in args):
            raise Refused(_STATE + " (Copying or linking maker's program is refused too.)")
        if name in _DESTROYERS or (name == "find" and "-delete" in args):
            for a in args if name != "find" else args[:next(
                    (i for i, a in enumerate(args) if a.startswith("-")), len(args))]:
                if not a.startswith("-"):
                    self.check_path(a, cwd, glob=any(c in a for c in "*?["), destroys=True)
        for code in run.code:
            self._code(code, cwd)

    def _maker(self, run: Run) -> None:
        if run.assignments:
            raise Refused(_STATE + " (Run it without setting variables before it.)")
        if run.via == "python -m":
            raise Refused(_STATE)
        if run.appends:
            raise Refused(_STATE + f" (`{run.via}` would add arguments of its own.)")
        args = run.args
        if not is_allowed(args, EXECUTOR_COMMANDS, alone=True):
            raise Refused(_STATE)
        if self.step is not None and args[:1] == ["land"] and args[1:] != [str(self.step)]:
            raise Refused(f"maker: you run step {self.step}; `maker land` brings back that "
                          f"step's change only: `maker land {self.step}`. Another step's "
                          "executor lands its own, when its work is done.")

    def _git(self, args: list[str]) -> None:
        if sets_git_config(args):
            raise Refused(self.git_text())
        if git_subcommand(args)[1] == "clean":
            raise Refused(self.plans_text() + " `git clean` would delete it (it is not "
                          "tracked); remove the files you mean by name.")
        why = git_refusal(args, beside=bool(self.workspace))
        if why:
            raise Refused(why)

    def _link_targets(self, name: str, args: list[str], cwd: Path) -> None:
        """A symbolic link's target is read from the link's folder, not from ``cwd``:
        checked there (``ln -s ../../../../x sub/l`` names the main checkout)."""
        flags = [a for a in args if a.startswith("-") and a != "-"]
        symbolic = any(a in ("--symbolic",) or (not a.startswith("--") and "s" in a[1:])
                       for a in flags)
        operands = [a for a in args if not (a.startswith("-") and a != "-")]
        if not symbolic or len(operands) < 2:
            return
        link = resolve(cwd, operands[-1])
        folder = link if link.is_dir() else link.parent
        for target in operands[:-1]:
            self.check_path(target, folder)

    def _code(self, code: str, cwd: Path) -> None:
        """Program text handed to an interpreter: it may not name maker or plans/."""
        for token in _CODE_TOKEN.findall(code):
            if token == "maker" or token.startswith("maker.") or _maker_name(token):
                raise Refused(_STATE + " (Inline code may not use maker either.)")
            if "/" in token or token in ("plans", self.plans_root.name) or (
                    self.workspace and token == ".git"):  # (the worktree's own .git file)
                self.check_word(token, cwd, glob=any(c in token for c in "*?["))


def _maker_name(word: str) -> bool:
    """Whether ``word`` runs maker: by name or by path, however quoted."""
    return PurePosixPath(word).name in ("maker", "maker.exe")
