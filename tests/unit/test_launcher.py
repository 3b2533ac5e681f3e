"""scripts/launch and scripts/bootstrap: an installed plugin finds its Python once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "scripts" / "launch"


def _path_with(tmp_path: Path, python: str | None) -> str:
    """A PATH holding only the basics, and `python3` if given."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for tool in ("bash", "sh", "dirname", "mkdir", "rmdir", "mv", "sleep", "seq", "cat", "rm"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True,
                               text=True, check=False).stdout.strip()
        if found and not (bindir / tool).exists():
            (bindir / tool).symlink_to(found)
    if python:
        (bindir / "python3").symlink_to(python)
    return str(bindir)


def _cache_dir(tmp_path: Path) -> Path:
    """Where the launcher caches its interpreter: maker's own folder in the home."""
    return tmp_path / "home" / ".local" / "share" / "maker"


def run_launch(tmp_path: Path, python: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(tmp_path / "home"), "PATH": _path_with(tmp_path, python),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    return subprocess.run([str(LAUNCH), *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_first_use_finds_and_caches_a_real_interpreter(tmp_path: Path) -> None:
    result = run_launch(tmp_path, sys.executable, "-c", "import maker, sys; print(sys.executable)")
    assert result.returncode == 0, result.stderr
    cached, *deps = (_cache_dir(tmp_path) / "python").read_text().splitlines()
    # (one cache for every entry point: not the plugin data dir the hooks alone are given)
    assert not (tmp_path / "data" / "python").exists()
    assert os.path.exists(cached)
    # Then the folders that hold its PyYAML and click, which run_module.py adds itself.
    found = subprocess.run([cached, "-c", "import yaml, click; print(yaml.__file__); "
                            "print(click.__file__)"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert all(os.path.dirname(os.path.dirname(f)) in deps for f in found), (deps, found)
    # The plugin's own src/ is what runs.
    again = run_launch(tmp_path, None, "-c", "import maker; print(maker.__file__)")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().startswith(str(ROOT / "src"))


def test_cached_interpreter_is_used_without_looking_again(tmp_path: Path) -> None:
    _cache_dir(tmp_path).mkdir(parents=True)
    (_cache_dir(tmp_path) / "python").write_text(sys.executable + "\n")
    result = run_launch(tmp_path, None, "-c", "print('ran')")  # no python3 on PATH at all
    assert result.returncode == 0 and result.stdout.strip() == "ran"


def test_no_python_gives_a_clear_message(tmp_path: Path) -> None:
    result = run_launch(tmp_path, None, "-c", "pass")
    assert result.returncode == 3
    assert "needs Python 3.10 or newer" in result.stderr
    assert "MAKER_PYTHON" in result.stderr


def test_bin_maker_runs_the_cli(tmp_path: Path) -> None:
    env = dict(os.environ, MAKER_PYTHON=sys.executable)
    result = subprocess.run([str(ROOT / "bin" / "maker"), "--version"], env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "maker" in result.stdout


def test_the_projects_own_modules_never_shadow_makers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "plans").mkdir(parents=True)
    (project / "yaml.py").write_text("open('RAN_PROJECT_CODE', 'w').close()\n")
    (project / "click.py").write_text("open('RAN_PROJECT_CODE', 'w').close()\n")
    env = dict(os.environ, MAKER_PYTHON=sys.executable)
    result = subprocess.run([str(ROOT / "bin" / "maker"), "status", "--exit-zero"], cwd=project,
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    hook = subprocess.run([str(ROOT / "scripts" / "hook"), "session-start"], cwd=project,
                          input='{"hook_event_name": "SessionStart", "session_id": "s"}',
                          env=dict(env, CLAUDE_PROJECT_DIR=str(project)), capture_output=True,
                          text=True, timeout=60, check=False)
    assert hook.returncode == 0
    assert not (project / "RAN_PROJECT_CODE").exists()


def test_verification_commands_get_the_users_pythonpath_not_makers(tmp_path: Path) -> None:
    """maker's src/ reaches maker's own process only, never the user's commands."""
    project = tmp_path / "project"
    project.mkdir()
    seen = {}
    out = tmp_path / "seen.txt"
    for user_path in (None, "/the/users/lib"):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(MAKER_PYTHON=sys.executable, TEST_CMD=f'echo "PP=[$PYTHONPATH]" > {out}',
                   MAKER_PLANS_DIR=str(project / "plans"))
        if user_path:
            env["PYTHONPATH"] = user_path
        result = subprocess.run([str(ROOT / "bin" / "maker"), "verify"], cwd=project, env=env,
                                capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stderr
        seen[user_path] = out.read_text()
    assert "PP=[]" in seen[None]
    assert "PP=[/the/users/lib]" in seen["/the/users/lib"]
    assert str(ROOT / "src") not in seen[None] + seen["/the/users/lib"]


def test_bin_maker_runs_through_a_symlink_from_anywhere(tmp_path: Path) -> None:
    link = tmp_path / "elsewhere" / "maker"
    link.parent.mkdir()
    link.symlink_to(ROOT / "bin" / "maker")
    env = dict(os.environ, MAKER_PYTHON=sys.executable)
    result = subprocess.run([str(link), "--version"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "maker, version" in result.stdout, result.stderr


def test_a_missing_maker_python_is_named(tmp_path: Path) -> None:
    env = dict(os.environ, MAKER_PYTHON=str(tmp_path / "no-python"))
    result = subprocess.run([str(ROOT / "bin" / "maker"), "--version"], env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 3
    assert f"MAKER_PYTHON={tmp_path / 'no-python'} is not a program that can run" \
        in result.stderr
    assert "Traceback" not in result.stderr


def test_a_maker_python_without_pyyaml_or_click_says_how_to_fix_it(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True,
                   timeout=120)
    env = dict(os.environ, MAKER_PYTHON=str(bare / "bin" / "python"))
    result = subprocess.run([str(ROOT / "bin" / "maker"), "status"], env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "has no PyYAML or click" in result.stderr and "pip install PyYAML click" in \
        result.stderr
    hook = subprocess.run([str(ROOT / "scripts" / "hook"), "session-start"],
                          input='{"hook_event_name": "SessionStart", "session_id": "s"}',
                          env=dict(env, CLAUDE_PROJECT_DIR=str(_with_plans(tmp_path))),
                          capture_output=True, text=True, timeout=60, check=False)
    assert hook.returncode == 0
    assert "has no PyYAML or click" in json.loads(hook.stdout)["systemMessage"]


def _with_plans(tmp_path: Path) -> Path:
    (tmp_path / "project" / "plans").mkdir(parents=True)
    return tmp_path / "project"


def _venv_with_a_noisy_site(tmp_path: Path) -> tuple[Path, Path]:
    """A Python whose site-packages reaches PyYAML and click only through a .pth file,
    and whose .pth files and sitecustomize leave a mark when they run."""
    venv = tmp_path / "noisy"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    site_dir = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path("
         "'purelib'))"], capture_output=True, text=True, check=True).stdout.strip())
    import click
    import yaml

    deps = tmp_path / "deps"  # PyYAML and click alone
    deps.mkdir()
    for module in (yaml, click):
        (deps / module.__name__).symlink_to(Path(module.__file__).parent)
    marks = tmp_path / "marks"
    marks.mkdir()
    (site_dir / "deps.pth").write_text(f"{deps}\n")
    (site_dir / "noisy.pth").write_text(
        f"import pathlib; pathlib.Path({str(marks / 'pth')!r}).touch()\n")
    (site_dir / "sitecustomize.py").write_text(
        f"import pathlib; pathlib.Path({str(marks / 'sitecustomize')!r}).touch()\n")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "claude_agent_sdk.py").write_text("VALUE = 42\n")
    (site_dir / "extra.pth").write_text(f"{extra}\n")
    return venv / "bin" / "python", marks


def _cached(tmp_path: Path, python: Path) -> None:
    """A cache as an older maker wrote it (the interpreter only): the next start adds
    the dependency folders, keeping the interpreter."""
    _cache_dir(tmp_path).mkdir(parents=True)
    (_cache_dir(tmp_path) / "python").write_text(f"{python}\n")
    first = run_launch(tmp_path, None, "-c", "pass")
    assert first.returncode == 0, first.stderr
    assert (_cache_dir(tmp_path) / "python").read_text().splitlines()[0] == str(python)


def test_the_users_site_packages_never_run_in_makers_interpreter(tmp_path: Path) -> None:
    python, marks = _venv_with_a_noisy_site(tmp_path)
    _cached(tmp_path, python)
    for name in marks.iterdir():  # bootstrap ran it normally, once
        name.unlink()
    # A yaml.py on PYTHONPATH would break maker: it is not looked at (-E).
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "yaml.py").write_text("raise SystemExit('the wrong yaml')\n")
    env = {"HOME": str(tmp_path / "home"), "PATH": _path_with(tmp_path, None),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "PYTHONPATH": str(shadow)}
    result = subprocess.run(
        [str(LAUNCH), "-c", "import sys, yaml, click, maker.hooks.protocol; "
         "print('site' in sys.modules, yaml.__file__)"],
        env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    ran, yaml_file = result.stdout.split()
    assert ran == "False" and not yaml_file.startswith(str(shadow))
    assert list(marks.iterdir()) == [], "a .pth file or sitecustomize ran"


def test_a_module_only_site_can_find_is_still_found(tmp_path: Path) -> None:
    """The SDK for `maker run` may live where only site looks (a .pth file): a module
    that maker's folders lack is looked for again after site has run."""
    python, _ = _venv_with_a_noisy_site(tmp_path)
    _cached(tmp_path, python)
    result = run_launch(tmp_path, None, "-c", "import sys; print('site' in sys.modules); "
                        "import claude_agent_sdk; print(claude_agent_sdk.VALUE)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "42"]


def test_a_package_runs_as_python_m_runs_it_and_a_plain_module_too(tmp_path: Path) -> None:
    # run_module.py runs a package's __main__ without runpy: the same names, argv and
    # sys.modules["__main__"] as `python -m`; anything else goes through runpy itself.
    probe = ("import sys\n"
             "main = sys.modules['__main__']\n"
             "print(repr((__name__, __package__, __spec__.name, sys.argv[0] == __file__,\n"
             "      main.__dict__ is globals(), sys.argv[1:], 'runpy' in sys.modules)))\n")
    pkg = tmp_path / "probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(probe)
    (tmp_path / "probe_mod.py").write_text(probe)
    runner = str(ROOT / "scripts" / "run_module.py")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    outs = [subprocess.run([sys.executable, runner, "-m", name, "a", "b"], env=env,
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
            for name in ("probe_pkg", "probe_mod")]
    assert outs[0].strip() == repr(("__main__", "probe_pkg", "probe_pkg.__main__", True,
                                    True, ["a", "b"], False))
    assert outs[1].strip() == repr(("__main__", "", "probe_mod", True, True, ["a", "b"],
                                    True))
    native = subprocess.run([sys.executable, "-m", "probe_pkg", "a", "b"], env=env,
                            capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert native.rsplit(",", 1)[0] == outs[0].rsplit(",", 1)[0]  # but for runpy


def test_a_hook_without_home_says_so_and_never_fails(tmp_path: Path) -> None:
    """Claude Code sets HOME; a hook started without it (and without XDG_DATA_HOME or
    CLAUDE_PLUGIN_DATA) has nowhere for maker's interpreter cache. It says so, exit 0,
    rather than dying in bash on an unbound variable."""
    hook = ROOT / "scripts" / "hook"
    project = tmp_path / "project"
    (project / "plans").mkdir(parents=True)
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s",
                        "prompt": "/maker:status", "cwd": str(project)})
    env = {"PATH": f"{_path_with(tmp_path, sys.executable)}:/usr/bin:/bin",
           "CLAUDE_PROJECT_DIR": str(project)}
    done = subprocess.run([str(hook), "user-prompt-submit"], input=event, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "unbound variable" not in done.stderr, done.stderr
    said = json.loads(done.stdout)["systemMessage"]
    assert "HOME is not set" in said and "MAKER_PYTHON" in said
    # With the interpreter named, HOME is not needed: the hook does its work.
    done = subprocess.run([str(hook), "user-prompt-submit"], input=event,
                          env=dict(env, MAKER_PYTHON=sys.executable), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
    start = json.dumps({"hook_event_name": "SessionStart", "session_id": "s",
                        "source": "startup", "cwd": str(tmp_path)})
    done = subprocess.run([str(hook), "session-start"], input=start,
                          env=dict(env, CLAUDE_PROJECT_DIR=str(tmp_path)),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_offline_the_first_use_names_one_remedy_for_every_entry_point(tmp_path: Path) -> None:
    """No package index: the SessionStart hook says so, exit 0, naming the one venv; the
    command line's `maker` (no plugin data dir) names the same one, so the one remedy
    fixes both."""
    from harness.install import bare_python

    bare = bare_python(tmp_path / "python")
    env = {"HOME": str(tmp_path / "home"), "PATH": f"{bare}:/usr/bin:/bin",
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull,
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    start = json.dumps({"hook_event_name": "SessionStart", "session_id": "s",
                        "source": "startup", "cwd": str(tmp_path)})
    done = subprocess.run([str(ROOT / "scripts" / "hook"), "session-start"], input=start,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)["systemMessage"]
    venv = _cache_dir(tmp_path) / "venv"
    assert "could not install PyYAML and click" in said and "Nothing was blocked" in said
    assert f"Run: {venv}/bin/python -m pip install pyyaml click" in said
    line = subprocess.run([str(LAUNCH), "-m", "maker", "status"],
                          env={k: v for k, v in env.items() if k != "CLAUDE_PLUGIN_DATA"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert line.returncode == 3 and f"Run: {venv}/bin/python -m pip install" in line.stderr
