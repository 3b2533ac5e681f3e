"""The step executor's Bash inside an OS boundary: the kernel, not a list of spellings.

Every Bash command of a step's executor (the plugin's PreToolUse, and ``maker run``'s
session, through ``updatedInput``), and every project check ``maker verify`` runs for a
step, runs through ``maker-box`` (beside this module): on Linux a user, mount and PID
namespace, on macOS Seatbelt (``sandbox-exec``), in which what the executor must never
write is read-only.

- read-only: the plan's ``plans/`` (and so every worktree's copy under it), maker's data
  directories, the repository's ``.git/config``, ``.git/hooks/`` and ``.git/info/``; for a
  step run beside others, the whole main checkout (its own worktree stays writable, but
  for the worktree's copy of ``plans/`` and its ``.git`` file);
- hidden: the sealing key, and the sockets through which a command could ask a process
  outside the box to run something (tmux, screen, the systemd and D-Bus buses);
- everything else as it was: the step's files, temp directories, build caches.

:func:`protection` says what this machine allows, probed once per boot and cached: the
kernel boundary, or the command guard alone (``maker.tools.guards.guard``) with the reason. The
guard is always the first answer; the boundary is what holds when the guard misreads a
command. A person's ``boundary:`` setting (``plans/settings.yaml``) may require it
(:func:`boxed_command` then refuses a command that would run without it) or turn it off.

What a person is asked to allow, in the client's ``default`` mode, is the executor's own
command under a one-line wrapper (:func:`wrap`): ``/bin/sh …/maker-box SPEC <<'MAKER_BOX_…'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shlex
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from maker.core.paths import data_dir, step_tmp_dir
from maker.tools.box.box_install import box_stamp, installed_box
from maker.tools.box.box_spec import SANDBOX_EXEC, SPEC_DIR, Spec, spec_for, unshare_path
from maker.tools.command.readonly import why_not_read_only
from maker.tools.registry import READ_ONLY_TOOLS

__all__ = ["Protection", "boxed_command", "protection", "step_network",
           "step_tmp", "unwrap", "unwrap_at", "weaker_notice", "will_box", "wrap",
           "write_spec"]

_CACHE = "boundary.json"
_PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Protection:
    """What holds the executor's Bash on this machine: ``kernel`` (the boundary) or
    ``guard`` (the command guard alone, ``why`` says why)."""

    kind: str
    how: str

    @property
    def kernel(self) -> bool:
        return self.kind == "kernel"

    def describe(self, setting: str = "auto") -> str:
        """What holds the executor's Bash under the person's ``boundary:`` setting, in
        words for ``maker status``, the session's notice and ``maker run``."""
        if setting == "off":
            return "the command guard alone (`boundary: off` in plans/settings.yaml)"
        if self.kernel:
            return f"the kernel boundary ({self.how}), the command guard first"
        if setting == "required":
            return (f"nothing: plans/settings.yaml requires an OS boundary and this machine "
                    f"cannot make one ({self.how}), so the executor's Bash is refused")
        return f"the command guard alone: no OS boundary on this machine ({self.how})"


def weaker_notice(setting: str) -> str:
    """What a person is told once a session and once a run when a step executor's Bash
    is held by less than the kernel boundary (under their ``boundary:`` setting); ""
    when the kernel holds it."""
    found = protection()
    if found.kernel and setting != "off":
        return ""
    return f"a step executor's Bash is held by {found.describe(setting)}"


def protection(*, refresh: bool = False) -> Protection:
    """What this machine allows, probed once per boot (cached in maker's data dir)."""
    if sys.platform == "darwin":
        unshare = SANDBOX_EXEC if os.access(SANDBOX_EXEC, os.X_OK) else None
        if unshare is None:
            return Protection("guard", f"no {SANDBOX_EXEC} (macOS's Seatbelt)")
    elif sys.platform.startswith("linux"):
        unshare = unshare_path()
        if unshare is None:
            return Protection("guard", "no `unshare` (util-linux) in the system's folders")
    else:
        return Protection("guard", f"{sys.platform}: maker's boundary is built on Linux "
                                   "namespaces and macOS's Seatbelt")
    boot = _boot_id()
    cache = data_dir() / _CACHE
    if not refresh:
        try:
            seen = json.loads(cache.read_text())
            if seen.get("boot") == boot and seen.get("unshare") == unshare and \
                    seen.get("box") == box_stamp():
                return Protection(seen["kind"], seen["how"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
    found = _probe()
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        _write(cache, json.dumps({"boot": boot, "unshare": unshare, "box": box_stamp(),
                                  "kind": found.kind, "how": found.how}))
    except OSError:
        pass  # (probed again next time)
    return found


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _probe() -> Protection:
    """Make a box around a scratch folder and try to write into it: the boundary works
    only if the write is refused and a write beside it is not."""
    with tempfile.TemporaryDirectory(prefix="maker-box-probe-") as scratch:
        shut, open_ = Path(scratch, "shut"), Path(scratch, "open")
        shut.mkdir()
        open_.mkdir()
        spec = Path(scratch, "spec")
        spec.write_text(Spec((("rw", scratch), ("ro", str(shut)))).text())
        probe = (f"if (: > '{shut}/x') 2>/dev/null; then echo written; else echo refused; fi; "
                 f": > '{open_}/x' && id -u")
        done = _run(["/bin/sh", str(installed_box()), str(spec)], stdin=probe)
        said = done.stdout.split()
        if done.returncode == 0 and said[:1] == ["refused"] and (open_ / "x").exists():
            user = f", as uid {said[1]}" if len(said) > 1 else ""
            how = "Seatbelt (sandbox-exec)" if sys.platform == "darwin" else \
                "user, mount and PID namespaces"
            return Protection("kernel", how + user)
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:200]
        return Protection("guard", f"the box could not make a read-only boundary: {why}")


def _run(args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, input=stdin, capture_output=True, text=True,
                              timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return subprocess.CompletedProcess(args, 127, "", str(exc))


# -- the call ---------------------------------------------------------------------------


def wrap(command: str, spec_path: Path) -> str:
    """``command`` run in the box that ``spec_path`` describes: one line above it, the
    command itself as written below (a quoted here-document, so nothing in it is read
    by the outer shell)."""
    end = "MAKER_BOX"
    while end in command:
        end = f"MAKER_BOX_{secrets.token_hex(4)}"
    return (f"/bin/sh {_quote(str(installed_box()))} {_quote(str(spec_path))} <<'{end}'\n"
            f"{command}\n{end}")


def _quote(text: str) -> str:
    return shlex.quote(text)


def will_box(setting: str) -> bool:
    """Whether an executor's Bash runs in a box under the person's ``boundary`` setting on
    this machine (as :func:`boxed_command` decides it)."""
    return setting != "off" and protection().kernel


def boxed_command(plans_root: Path, step: int, command: str, *,
                  workspace: Path | None = None, setting: str = "auto",
                  found: Protection | None = None, writes: list[str] | None = None,
                  network: bool = True) -> tuple[str | None, str | None]:
    """``(refusal, command to run instead)`` for the executor of ``step`` of the plan in
    ``plans_root`` (``writes``: the step's own; ``network``: the machine's, else loopback
    only): the command wrapped in its box, with the step's own ``/tmp``; unboxed
    (``(None, None)``) where none can be made or the person's ``setting`` is ``off``;
    refused where ``setting`` is ``required`` and none can be made."""
    if setting == "off":
        return None, None
    found = found or protection()
    if not found.kernel:
        if setting == "required":
            return (f"maker: plans/settings.yaml requires an OS boundary for the step "
                    f"executor's Bash (`boundary: required`), and this machine has none: "
                    f"{found.how}. Hand off with status: blocked and this reason; a person "
                    "can set `boundary: auto` to run with the command guard alone."), None
        return None, None
    tmp = None
    key = workspace_key(workspace)  # (two workspaces of one step: a box and a /tmp each)
    if sys.platform.startswith("linux"):  # (Seatbelt cannot move a folder: macOS shares it)
        tmp, why = step_tmp(plans_root, step, key)
        if tmp is None:
            return (f"maker: the step's own /tmp cannot be made ({why}), so no OS boundary "
                    "can be made for this command; hand off with status: blocked and this "
                    "reason."), None
    spec = spec_for(plans_root, workspace, writes, network=network, private_tmp=tmp)
    if any("\n" in p for _, p in spec.entries):
        return ("maker: a path maker must protect holds a line break, so no OS boundary can "
                "be made for it; hand off with status: blocked and this reason."), None
    path = plans_root / ".maker" / SPEC_DIR / f"step-{step}{'-' + key if key else ''}.spec"
    write_spec(path, spec)
    return None, wrap(command, path)


def workspace_key(workspace: Path | None) -> str:
    """A name of its own for a step's workspace (its box's spec and ``/tmp``): "" for
    the main checkout; samples of a vote on one step's code, run at once, each get one,
    so that no sample's command reads another's box."""
    if workspace is None:
        return ""
    return hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:10]


def write_spec(path: Path, spec: Spec) -> None:
    """``spec`` at ``path``, written only when it changed (whole or not at all)."""
    text = spec.text()
    try:
        same = path.read_text() == text
    except OSError:
        same = False
    if not same:
        _write(path, text)


def step_network(setting: str, tools: list[str] | None) -> bool:
    """Whether a box has the machine's network under the person's ``network:`` setting:
    ``on`` always, ``off`` never (loopback only); ``auto``, a step's (``tools``) when it
    may write, and not a step whose tools only read nor ``maker verify``'s checks
    (``tools`` None)."""
    if setting in ("on", "off"):
        return setting == "on"
    return tools is not None and not all(
        t in READ_ONLY_TOOLS or (t.startswith("Bash(") and why_not_read_only(
            t[5:].rstrip(")").removesuffix(":*").removesuffix(" *")) is None)
        for t in tools)


def step_tmp(plans_root: Path, step: int, key: str = "") -> tuple[Path | None, str]:
    """``(folder, "")``: step ``step``'s own ``/tmp`` in its box (``key``: one of its
    workspaces', :func:`workspace_key`), made when missing, in a folder of the person's
    that no one else may enter (``/tmp/maker-UID/``); ``(None, why)`` when such a folder
    cannot be made or is not the person's alone."""
    uid = os.getuid()
    folder = step_tmp_dir(plans_root, step, key)
    for place in (folder.parent, folder):
        try:
            place.mkdir(mode=0o700, exist_ok=True)
            seen = os.lstat(place)
        except OSError as exc:
            return None, f"{place}: {exc.strerror or exc}"
        if not stat.S_ISDIR(seen.st_mode) or seen.st_uid != uid or seen.st_mode & 0o077:
            return None, (f"{place} is not a folder of this user's that only it may enter; "
                          "remove it")
    return folder, ""


def _write(path: Path, text: str) -> None:
    """``text`` into ``path`` whole or not at all (a derived file: no journal needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise


_BOXED = re.compile(r"/bin/sh (?P<box>\S+) (?P<spec>\S+) <<'(?P<end>MAKER_BOX(?:_[0-9a-f]{8})?)'\n"
                    r"(?P<inner>.*)\n(?P=end)", re.DOTALL)


def unwrap(command: str, plans_root: Path, step: int, workspace: Path | None = None
           ) -> str | None:
    """The command inside ``command`` when it is exactly :func:`wrap`'s call for step
    ``step`` of the plan in ``plans_root`` (``workspace``: the step's, as it was boxed),
    as the client asks a model to send it again after a hook changed it; else None."""
    key = workspace_key(workspace)
    return unwrap_at(command, plans_root / ".maker" / SPEC_DIR /
                     f"step-{step}{'-' + key if key else ''}.spec")


def unwrap_at(command: str, spec: Path) -> str | None:
    """The command inside ``command`` when it is exactly :func:`wrap`'s call with ``spec``;
    else None."""
    found = _BOXED.fullmatch(command)
    if found is None:
        return None
    inner, end = found["inner"], found["end"]
    if end in inner or found["box"] != _quote(str(installed_box())) \
            or found["spec"] != _quote(str(spec)):
        return None
    return inner
