"""The plugin demo's scenario: the maker plugin on disk, a greeting plan, its handoffs,
and whole flows (``/maker:plan``, ``/maker:step``) queued on a :class:`FakeMessagesAPI`.

The model's turns are :mod:`maker_scripted.turns`'; ``maker demo`` and the end-to-end
tests (``tests/harness``, which adds the turns only tests need) share them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from maker.verify.detect import ENV_VARS
from maker_scripted.errors import PluginNotFoundError
from maker_scripted.fake_api import MAIN, FakeMessagesAPI, ScriptItem
from maker_scripted.turns import (
    EXECUTOR,
    FEEDBACK,
    PLANNER,
    executor_reads_brief,
    main_launches_executor,
    main_launches_planner,
    main_reports_outcome,
    main_reports_status,
    main_runs,
    main_runs_outcome,
)

__all__ = [
    "BROKEN_HANDOFF_PROBLEMS",
    "EXECUTOR",
    "FEEDBACK",
    "GREETING_TASK",
    "MAIN",
    "PLANNER",
    "broken_handoff",
    "executor_flow",
    "find_plugin_root",
    "greeting_handoff",
    "greeting_plan",
    "handoff",
    "is_plugin_root",
    "new_project",
    "plan_flow",
    "plugin_env",
    "step_flow",
    "to_yaml",
]


# -- the plugin and its environment -------------------------------------------------

_PLUGIN_FILES = (".claude-plugin/plugin.json", "hooks/hooks.json", "commands/step.md",
                 "agents/step-executor.md", "scripts/hook", "bin/maker")


def is_plugin_root(path: Path) -> bool:
    """True when ``path`` holds the maker plugin's files."""
    return all((path / name).is_file() for name in _PLUGIN_FILES)


def find_plugin_root(start: Path | None = None) -> Path:
    """The plugin checkout this package runs from: the folder above ``dev/maker_scripted``
    that holds ``.claude-plugin/plugin.json``, ``commands/``, ``hooks/``…

    Raises :class:`PluginNotFoundError` when there is none (an install from a wheel
    carries the Python package only).
    """
    here = (start or Path(__file__)).resolve()
    for candidate in here.parents:
        if is_plugin_root(candidate):
            return candidate
    raise PluginNotFoundError(
        f"the maker plugin files (.claude-plugin/, commands/, agents/, hooks/, scripts/, "
        f"bin/) are not above {here.parent}: this maker was installed without them (e.g. "
        "from a wheel). Use a checkout of the maker repository (pip install -e '.[sdk]'), "
        "or pass --plugin-dir CHECKOUT")


def plugin_env(*, python: str | None = None,
               extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the real plugin needs in the CLI's environment, on top of ``isolated_env``.

    ``MAKER_PYTHON`` makes the plugin's launcher run this interpreter (no bootstrap);
    no approval comes from the environment (who approves is the plan's policy, set by
    a person: ``maker policy``). maker's data dir (``XDG_DATA_HOME``) is the caller's,
    although the CLI gets a home of its own: the caller is the same user, whose key
    seals verification runs and approvals. No verification command comes from the
    caller's environment, and neither do a plans dir or a session id.
    """
    from maker.store.seal import key_path

    env = {"MAKER_PYTHON": python or sys.executable,
           "MAKER_PLANS_DIR": "", "MAKER_SESSION_ID": "",
           "XDG_DATA_HOME": str(key_path().parent.parent)}
    env.update(dict.fromkeys(ENV_VARS.values(), ""))
    env.update(extra or {})
    return env


def new_project(path: Path) -> Path:
    """An empty git repository at ``path`` (created), as a user's project would be."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


# -- content: a plan and its handoffs -------------------------------------------------

GREETING_TASK = "Add a hello.txt greeting to the project, and check it"


def greeting_plan(task: str = GREETING_TASK) -> dict[str, Any]:
    """A two-step plan: step 0 writes hello.txt (Write, Read); step 1 checks it (Read
    only) and reads step 0's ``files``."""
    common = {"task_type": "action_step", "fallback_tools": [],
              "fallback_tool_instructions": "None needed: the primary tools cover it."}
    return {
        "task": task,
        "reasoning": "Writing the file and checking it are separate concerns: step 0 "
                     "creates hello.txt, step 1 reads it back with read-only tools.",
        "plan": [
            {"step": 0, "title": "Write hello.txt", **common,
             "task_description": "Create hello.txt at the project root containing the "
                                 "line 'hello', then read it back to check the content.",
             "primary_tools": ["Write", "Read"],
             "primary_tool_instructions": "Write hello.txt with Write; Read it back.",
             "input_variables": [], "output_variable": "step_0_output",
             "output_schema": "{files: list}", "next_step_sequence_number": 1},
            {"step": 1, "title": "Check hello.txt", **common,
             "task_description": "Read the files step 0 wrote and confirm hello.txt "
                                 "says hello; report ok true or false.",
             "primary_tools": ["Read"],
             "primary_tool_instructions": "Read each file of step_0_output.files.",
             "input_variables": ["step_0_output.files"], "output_variable": "step_1_output",
             "output_schema": "{ok: bool}", "next_step_sequence_number": -1},
        ],
    }





def to_yaml(data: Any) -> str:
    """``data`` as block YAML in its own key order, as a model would write it."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)


def greeting_handoff() -> str:
    """Step 0 of the greeting plan, done well: the handoff the demos' executor answers."""
    return handoff(0, {"files": ["hello.txt"]}, files=["hello.txt"],
                   summary="Wrote hello.txt with the line 'hello' and read it back.",
                   discoveries=["hello.txt lives at the project root."],
                   for_next_agent="hello.txt is in place; check that it says hello.")


def handoff(step: int, output: Mapping[str, Any], *, status: str = "complete",
            summary: str | None = None, files: Sequence[str] = (),
            **fields: Any) -> str:
    """A step executor's handoff YAML, as the brief's template asks for it."""
    data: dict[str, Any] = {
        "step": step, "status": status, "output": dict(output),
        "summary": summary or f"Did step {step}.",
        "discoveries": [], "decisions": [], "blockers": [],
        "for_next_agent": "Nothing special.", "files_changed": list(files), "evidence": [],
        "sweep": {"considered": ["an empty input"], "found": []},
    }
    data.update(fields)
    if data["sweep"] is None:  # (`sweep=None`: a handoff that never swept)
        del data["sweep"]
    return to_yaml(data)


def broken_handoff(step: int) -> str:
    """A handoff the gate rejects: no ``summary``, and ``output`` lacks ``files``."""
    return to_yaml({"step": step, "status": "complete", "output": {"file": "hello.txt"},
                    "files_changed": ["hello.txt"],
                    "sweep": {"considered": ["an empty input"], "found": []}})


BROKEN_HANDOFF_PROBLEMS = ("summary: missing",
                           "missing `files` (required by the step's output_schema")
"""What maker's gate says about :func:`broken_handoff` (parts of its lines)."""


# -- whole flows --------------------------------------------------------------------


def plan_flow(api: FakeMessagesAPI, *answers: ScriptItem) -> None:
    """``/maker:plan <task>``: the main agent launches the planner (which answers
    ``answers``, in order), runs ``maker status`` and shows it."""
    api.script(MAIN, main_launches_planner(), main_runs("maker status"),
               main_reports_status())
    api.script(PLANNER, *answers)


def step_flow(api: FakeMessagesAPI, work: Sequence[ScriptItem], *answers: ScriptItem,
              main_first: Sequence[ScriptItem] = ()) -> None:
    """``/maker:step …`` that maker starts: the main agent launches the executor, which
    reads its brief, does ``work`` and answers ``answers`` in order; then the main agent
    runs ``maker step outcome N`` and ends with its sentinel (a flow that asks the user
    is scripted turn by turn: it asks from maker's verdict instead).

    ``main_first``: main turns before the launch (the launch then answers the Stop
    hook's feedback).
    """
    launch = main_launches_executor(after_feedback_naming="is in progress" if main_first
                                    else None)
    api.script(MAIN, *main_first, launch, main_runs_outcome(), main_reports_outcome())
    executor_flow(api, work, *answers)


def executor_flow(api: FakeMessagesAPI, work: Sequence[ScriptItem], *answers: ScriptItem) -> None:
    """The step executor: read the brief (``maker context N``), do ``work``, answer
    ``answers`` in order (each after the first answering the hook's feedback)."""
    api.script(EXECUTOR, executor_reads_brief(), *work, *answers)
