"""Every import the five seed documents write works as written: a public import path is
an API, whatever moves inside (STYLE.md 16).

The lines are copied from the seeds (``grep -ohE "from maker(\\.[a-z_]+)+ import …"``
over ``shared/seeds/*.txt``); each runs in a fresh interpreter, so one module's import
cannot hide another's failure.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

SEED_IMPORTS = (
    "from maker.core.events import StepStarted",
    "from maker.core.events import TaskSubmitted, PlanCreated",
    "from maker.core.models import AgentResult",
    "from maker.core.models import Plan, PlanStep",
    "from maker.core.models import PlanStep, AgentResult, TaskConfig",
    "from maker.core.models import TaskConfig",
    "from maker.core.module import Module",
    "from maker.executor.agent_runner import AgentRunner",
    "from maker.executor.context_builder import ContextBuilder",
    "from maker.planner.parser import parse_plan",
    "from maker.planner.planner import PlannerModule",
    "from maker.prompts import load_prompt",
    "from maker.red_flag.red_flagger import RedFlagger",
    "from maker.tools.registry import ToolRegistry",
    "from maker.yaml_cleaner.cleaner import YAMLCleaner",
)


def test_every_seed_import_works_as_written() -> None:
    failed = {}
    for line in SEED_IMPORTS:
        done = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True,
                              timeout=60)
        if done.returncode:
            failed[line] = done.stderr.strip().splitlines()[-1:]
    assert not failed, f"the seeds' imports fail as the seeds write them: {failed}"


@pytest.mark.parametrize(("alias", "name"), [
    ("maker.executor.agent_runner", "AgentRunner"),
    ("maker.executor.context_builder", "ContextBuilder"),
])
def test_a_seed_path_is_the_same_class_as_its_home(alias: str, name: str) -> None:
    # One class, not a copy: isinstance checks and patch.object on it hold across paths.
    home = importlib.import_module(alias.replace("executor.", "executor.launch."))
    assert getattr(importlib.import_module(alias), name) is getattr(home, name)
