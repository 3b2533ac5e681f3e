"""How much a plan's run puts into the main session, per step: one `/maker:run` over a
10-step plan against ten `/maker:step` commands over the same plan, in the same run.

Both run in the real CLI, interactive, in a pseudo-terminal with its defaults (auto
mode, background subagents), policy `never` (the person answers maker's question for
every step), against the scripted Messages API; the scripted main agent does only what
maker's lines say (tests/harness/run_loop.py). Measured from the main agent's requests
as the API receives them, per step (from the request that launches step k's executor
to the one before step k+1's):

- maker's own characters: the command's text, maker's hook contexts (verdicts, launch
  notes, answers), the output of maker's commands, the deliverable a subagent handed
  back, and the question the main agent asks for maker;
- all the characters the main session grew by (the client's own text included);
- the main agent's turns, and each executor's.

The baseline is ten `/maker:step` commands with the plugin as it was before
`/maker:run` (``--base``, extracted with `git archive`, its own code running its hooks).

    .venv/bin/python benchmarks/bench_main_session.py [--steps 10] [--base COMMIT]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from harness.queries import RecordingAPI  # noqa: E402
from harness.run_loop import RunExecutor, RunMain, answer_until_ended, chain_plan  # noqa: E402
from harness.scenarios import find_plugin_root, plugin_env, to_yaml  # noqa: E402
from maker.planner.linter import lint_text  # noqa: E402
from maker.store.plan_store import PlanStore  # noqa: E402
from maker_scripted.classify import MAIN  # noqa: E402
from maker_scripted.recorded import RecordedRequest, content_text  # noqa: E402
from maker_scripted.terminal import start_claude  # noqa: E402
from maker_scripted.turns import EXECUTOR  # noqa: E402

# maker's context ends where the client's own text begins: a blank line, or a tag
_HOOK = re.compile(r"hook additional context: (.*?)(?=\n\n|</system-reminder>|\Z)", re.S)
_REPORT = re.compile(r"The report follows:\n(.*?)</agent-message>", re.S)
_RESULT = re.compile(r"<result>(.*?)</result>", re.S)
_LAUNCH = re.compile(r'"Execute maker step (\d+)\."')
BASE = "33adaa8"  # (the last commit before /maker:run)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def makers_chars(new: list[dict[str, Any]]) -> tuple[int, int]:
    """maker's own characters among ``new`` messages of the main session: ``(per step,
    once)``. Once: a ``/maker:`` command's text (``/maker:run`` pays it once per run,
    ``/maker:step`` once per step) and the session's start."""
    step = once = 0
    for message in new:
        for block in _blocks(message):
            if block.get("type") == "tool_use" and block.get("name") == "AskUserQuestion":
                step += len(json.dumps(block.get("input"), ensure_ascii=False))
                continue
            kind = block.get("type")
            text = block.get("text") if kind == "text" else \
                content_text(block.get("content", "")) if kind == "tool_result" else ""
            if not isinstance(text, str) or not text:
                continue
            if "maker-command:" in text:  # a /maker: command's expansion, from its mark
                once += len(text) - text.index("maker-command:")
                continue
            for found in _HOOK.finditer(text):
                said = found.group(1)
                if text[max(0, found.start() - 40):found.start()].endswith("SessionStart "):
                    once += len(said)
                    continue
                ending = said.find("maker: the plan is done")  # the run's report: once
                if ending >= 0:
                    once += len(said) - ending
                    said = said[:ending]
                step += len(said)
            step += sum(len(m) for m in _REPORT.findall(text))
            step += sum(len(m) for m in _RESULT.findall(text)  # (not the client's own note)
                        if not m.startswith("This agent's report was delivered"))
            if kind == "tool_result" and text.startswith(("maker", "STARTED", "RUN")):
                step += len(text)  # (a maker command's output)
    return step, once


def per_step(requests: list[RecordedRequest], steps: int) -> list[dict[str, int]]:
    """Per step: maker's characters (each step's; paid once), all characters, and the
    main agent's turns."""
    rows = [{"maker": 0, "once": 0, "all": 0, "turns": 0} for _ in range(steps)]
    current, seen = 0, 0
    for request in requests:
        new = request.messages[seen:]
        seen = len(request.messages)
        # the step whose launch this request's reply follows: the latest launch named
        launched = [int(n) for n in _LAUNCH.findall(json.dumps(new))]
        if launched:
            current = max(current, min(launched[-1], steps - 1))
        each, once = makers_chars(new)
        rows[current]["maker"] += each
        rows[current]["once"] += once
        rows[current]["all"] += len(json.dumps(new, ensure_ascii=False))
        rows[current]["turns"] += 1
    return rows


def plan_project(work: Path, steps: int) -> Path:
    """A git project with a ``steps``-step chain plan stored (no policy set: never)."""
    project = work / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    data = chain_plan(steps)
    parsed, problems = lint_text(to_yaml(data))
    assert parsed is not None and not problems, problems
    PlanStore(project / "plans").write_plan(parsed, data["task"])
    return project


def baseline(commit: str, dest: Path) -> Path:
    """The plugin at ``commit``, as files (its own src/ runs its hooks)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def measure(mode: str, steps: int, work: Path, root: Path) -> dict[str, Any]:
    project = plan_project(work, steps)
    home = work / "home"
    home.mkdir()
    with RecordingAPI() as api:
        executor = RunExecutor(api)
        executor.brief_by_command = root != find_plugin_root()
        main = RunMain(api, executor.launch)
        terminal = start_claude(api, project=project, home=home, plugin_dirs=[root],
                                env=plugin_env())
        try:
            commands = ["/maker:run --subagents"] if mode == "run" else ["/maker:step"] * steps
            for command in commands:
                main.ended = None
                api.script(MAIN, main)
                terminal.submit(command)
                answer_until_ended(terminal, main)
        finally:
            terminal.close()
        api.assert_done()
        mains = api.requests_for(MAIN)
        rows = per_step(mains, steps)
        executor_turns = len(api.requests_for(EXECUTOR)) / steps
    return {"rows": rows, "executor_turns": executor_turns, "typed": len(commands)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--base", default=BASE, help="the baseline commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="maker-main-session-") as scratch:
        base = baseline(args.base, Path(scratch, "base"))
        sides = ((f"before ({args.base}): {args.steps} x /maker:step", "step", base),
                 (f"after: {args.steps} x /maker:step", "step", find_plugin_root()),
                 ("after: one /maker:run --subagents", "run", find_plugin_root()))
        for label, mode, root in sides:
            sizes = {name: len((root / path).read_text()) for name, path in (
                ("/maker:run", "commands/run.md"), ("/maker:step", "commands/step.md"),
                ("step-executor", "agents/step-executor.md")) if (root / path).exists()}
            with tempfile.TemporaryDirectory(dir=scratch) as tmp:
                result = measure(mode, args.steps, Path(tmp), root)
            rows = result["rows"]
            each = [r["maker"] for r in rows]
            print(f"{label}: typed {result['typed']} command(s); instructions {sizes}")
            print(f"  maker's characters per step: step 1 {each[0]}, step {args.steps} "
                  f"{each[-1]} ({each[-1] / max(each[0], 1):.2f}x), max {max(each)}; paid "
                  f"once: {sum(r['once'] for r in rows)} (commands and the session's start)")
            print(f"  all characters the main session grew by: step 1 {rows[0]['all']}, "
                  f"step {args.steps} {rows[-1]['all']}, total {sum(r['all'] for r in rows)}")
            print(f"  turns per step: main agent "
                  f"{sum(r['turns'] for r in rows) / len(rows):.1f}, executor "
                  f"{result['executor_turns']:.1f}")
            print("  maker's characters, step by step: " + " ".join(map(str, each)))


if __name__ == "__main__":
    main()
