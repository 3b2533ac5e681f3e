"""What a `/maker:run` puts into the main session, the two ways it can run its steps, in
the same run: each step a background subagent of the main session (`/maker:run
--subagents`, the way before) against maker's engine in one background task per stretch
between a person's decisions (`/maker:run`, the way now).

Both in the real CLI, interactive, in a pseudo-terminal with its defaults (auto mode,
background tasks), against the scripted Messages API; the scripted main agent does only
what maker's `Next:` lines say (tests/harness/run_loop.py). Two plans: 30 steps under the
policy `auto` (no question) and 10 under `never` (a question a step). Measured from the
main agent's requests as the API receives them:

- all told: every character the main session grew by after the typed command, the
  client's own text included, less the run's closing report (paid once);
- maker's own characters among them (its hook contexts, its commands' output, the
  questions it words: ``bench_main_session.makers_chars``), and the client's (the rest);
- per step (auto) and per question (never); for the subagent way, step 1 against step 30;
- the main agent's requests and the executors' per step; wall time.

Goals (issue: the run outside the main conversation): under `auto`, at most 300
characters a step all told, flat; under `never`, at most 2,500 a question.

    .venv/bin/python benchmarks/bench_run_ways.py [--auto 30] [--never 10]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_main_session import makers_chars, per_step, plan_project  # noqa: E402

from harness.queries import RecordingAPI  # noqa: E402
from harness.run_loop import (  # noqa: E402
    EngineExecutor,
    RunExecutor,
    RunMain,
    answer_until_ended,
)
from harness.scenarios import find_plugin_root, plugin_env  # noqa: E402
from maker.executor.acceptance.approval import set_policy  # noqa: E402
from maker.store.plan_store import PlanStore  # noqa: E402
from maker_scripted.classify import MAIN  # noqa: E402
from maker_scripted.terminal import start_claude  # noqa: E402
from maker_scripted.turns import EXECUTOR  # noqa: E402

REPORT = "maker: the plan is done"
AUTO_GOAL = 300  # characters a step, all told, under `auto`
NEVER_GOAL = 2_500  # characters a question, all told, under `never`


def _project(work: Path, steps: int, policy: str) -> Path:
    project = plan_project(work, steps)
    set_policy(PlanStore(project / "plans"), policy, "person (the benchmark)")
    return project


def _size(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False))


def _report_chars(messages: list[dict[str, Any]]) -> int:
    text = json.dumps(messages, ensure_ascii=False)
    at = text.rfind(REPORT)
    if at < 0:
        return 0
    end = text.find("RUN_DONE", at)
    return (end if end > 0 else len(text)) - at


def measure(way: str, steps: int, policy: str, work: Path) -> dict[str, Any]:
    project = _project(work, steps, policy)
    home = work / "home"
    home.mkdir()
    with RecordingAPI() as api:
        env = plugin_env()
        if way == "foreground":  # the user's own setting: subagents in the foreground
            env["CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"] = "1"
        if way == "engine":
            engine = EngineExecutor(api, steps, 1 if policy == "never" else None)
            main = RunMain(api, lambda k: None, on_stretch=engine.stretch)
            command = "/maker:run"
        else:
            executor = RunExecutor(api)
            main = RunMain(api, executor.launch)
            command = "/maker:run --subagents"
        terminal = start_claude(api, project=project, home=home,
                                plugin_dirs=[find_plugin_root()], env=env)
        began = time.monotonic()
        try:
            api.script(MAIN, main)
            terminal.submit(command)
            asked = answer_until_ended(terminal, main, 300)
        finally:
            terminal.close()
        wall = time.monotonic() - began
        api.assert_done()
        mains = api.requests_for(MAIN)
        first, last = mains[0].messages, mains[-1].messages
        new = last[len(first):]
        report = _report_chars(new)
        grown = _size(new) - report
        maker_each, maker_once = makers_chars(new)
        rows = per_step(mains, steps) if way != "engine" else []
        return {"way": way, "policy": policy, "steps": steps, "questions": asked,
                "all": grown, "maker": maker_each, "client": grown - maker_each,
                "report": report, "main_requests": len(mains),
                "executor_requests": len(api.requests_for(EXECUTOR)), "wall": wall,
                "rows": rows}


def show(result: dict[str, Any]) -> None:
    """One way's figures, in a line (and, per step, step 1 against the last)."""
    n, q = result["steps"], result["questions"]
    per = f"{result['all'] / n:,.0f} a step" + (f", {result['all'] / q:,.0f} a question"
                                                 if q else "")
    print(f"{result['way']:>10} / {result['policy']:<5} {n} steps, {q} question(s): "
          f"{result['all']:,} characters all told ({per}); maker's "
          f"{result['maker']:,}, the client's {result['client']:,}; report "
          f"{result['report']:,} (once); main requests {result['main_requests'] / n:.1f} a "
          f"step, executor {result['executor_requests'] / n:.1f}; {result['wall']:.0f} s")
    rows = result["rows"]
    if rows:
        print(f"{'':>19}step 1 {rows[0]['all']:,}, step {n} {rows[-1]['all']:,} "
              f"({rows[-1]['all'] / max(rows[0]['all'], 1):.2f}x) all told")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auto", type=int, default=30, help="steps of the auto plan")
    parser.add_argument("--never", type=int, default=10, help="steps of the never plan")
    parser.add_argument("--ways", default="subagents,foreground,engine",
                        help="which ways, comma-separated")
    args = parser.parse_args()
    missed = []
    with tempfile.TemporaryDirectory(prefix="maker-run-ways-") as scratch:
        for policy, steps in (("auto", args.auto), ("never", args.never)):
            for way in args.ways.split(",") if steps else ():
                with tempfile.TemporaryDirectory(dir=scratch) as tmp:
                    result = measure(way, steps, policy, Path(tmp))
                show(result)
                if way != "engine" or not steps:
                    continue
                per = result["all"] / max(result["questions"] or steps, 1)
                goal = AUTO_GOAL if policy == "auto" else NEVER_GOAL
                if per > goal:
                    missed.append(f"{policy}: {per:,.0f} characters a "
                                  f"{'step' if policy == 'auto' else 'question'} (goal "
                                  f"{goal:,})")
    if missed:
        print("goal missed: " + "; ".join(missed))
        sys.exit(1)
    print("goals met")


if __name__ == "__main__":
    main()
