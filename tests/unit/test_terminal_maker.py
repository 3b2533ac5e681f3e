"""The terminal's `maker` a plugin-only person gets (``scripts/hook``: ``terminal_maker``,
``ours``, ``relink_maker``, ``terminal_once``), run as bash runs them: a person's own
`maker` (a file, a relative link, a link to a drive not mounted) is never replaced; a
link of maker's own left dangling is pointed at the plugin again."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ("terminal_maker", "ours", "relink_maker", "tilde", "terminal_once")


def _run(home: Path, call: str, path: str | None = None) -> str:
    """``call`` with the hook's functions, as a session's start runs it; what it said."""
    script = "\n".join([
        "set -u", "shopt -s extglob", "shopt -u patsub_replacement 2>/dev/null",
        f"root={shlex.quote(str(ROOT))}", f"data={shlex.quote(str(home / 'data'))}", "said=",
        f"eval \"$(sed -n '{';'.join(f'/^{f}() {{/,/^}}/p' for f in FUNCTIONS)}' "
        f"{ROOT / 'scripts/hook'})\"",
        call, 'printf "%s" "$said"'])
    env = {"HOME": str(home), "PATH": path or f"{home}/.local/bin:/usr/bin:/bin"}
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          check=True, timeout=30).stdout


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".local/bin").mkdir(parents=True)
    return home


def test_the_first_session_links_it_and_says_so_once(tmp_path: Path) -> None:
    home = _home(tmp_path)
    said = _run(home, "terminal_once")
    assert said == "maker: `maker` for your terminal is ~/.local/bin/maker (a link to the " \
                   "plugin's)."
    assert os.readlink(home / ".local/bin/maker") == str(ROOT / "bin/maker")
    assert _run(home, "terminal_once") == ""  # (once)


def test_a_persons_own_maker_is_never_replaced(tmp_path: Path) -> None:
    home = _home(tmp_path)
    tool = home / "tools/mine/bin/maker"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho mine\n")
    tool.chmod(0o755)
    link = home / ".local/bin/maker"
    link.symlink_to("../../tools/mine/bin/maker")  # (relative: it works)
    _run(home, "terminal_once")
    assert os.readlink(link) == "../../tools/mine/bin/maker"
    link.unlink()
    link.symlink_to("/mnt/not-mounted/bin/maker")  # (dangling, not maker's)
    _run(home, "relink_maker")
    assert os.readlink(link) == "/mnt/not-mounted/bin/maker"


def test_makers_own_link_left_dangling_is_pointed_at_the_plugin_again(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _run(home, "terminal_once")
    link = home / ".local/bin/maker"
    link.unlink()
    link.symlink_to("/moved/away/bin/maker")
    (home / "data/terminal").write_text("/moved/away/bin/maker")  # (the one it made)
    _run(home, "relink_maker")
    assert os.readlink(link) == str(ROOT / "bin/maker")
