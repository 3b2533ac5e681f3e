"""``/maker:step N`` typed while maker's engine runs step N in a stretch.

The engine's stretch holds ``stretch.lock`` and runs step N with its own executor (the
active marker's session is the engine's ``maker-run-…``). ``maker step begin`` (what
``/maker:step N`` runs) treats that as another Claude Code session that "had" the step,
takes it over and tells the main agent to launch a second executor for the same step,
while the engine's executor keeps working on it: the engine's tool limits
(``maker.engine.tool_limits``) never check who owns the step, and the stretch only
stops *starting* steps once the run is stopped. Two executors then edit the same step
at once. (For a background subagent the same check says "one /maker:step runs a step
at a time" and refuses; the taken-over subagent is also cut off by its hooks.)
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harness.step_plans import linear
from maker.cli.main import cli
from maker.executor.state.lifecycle import start_step
from maker.executor.state.run import ENGINE, begin_run
from maker.executor.state.stretch import began, holding_stretch, stretch_runs
from maker.store.requests import save_request


def test_a_typed_step_is_not_taken_over_from_a_stretch_that_runs_it(tmp_path: Path) -> None:
    store = linear(tmp_path / "project", 3)
    with store.lock():
        begin_run(store, "sess-1", None, ENGINE)
    with holding_stretch(store) as mine:  # the stretch's process, at work
        assert mine
        began(store)
        start_step(store, 1, session_id="maker-run-abc123", take_over=True)  # as StepRun
        assert stretch_runs(store)
        data = tmp_path / "data"
        save_request("sess-2", "/maker:step 1", data, prompt_id="p-2")
        out = CliRunner().invoke(cli, ["step", "begin", "--session", "sess-2",
                                       "--data-dir", str(data), "--plans-dir", str(store.root)])
        assert out.exit_code == 0, out.output
        # The engine still runs step 1: a second executor must not be launched for it.
        assert "STARTED" not in out.output, out.output
        assert "REFUSED" in out.output
