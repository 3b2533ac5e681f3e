"""What the tests drive the scripted model with, beyond what ``maker demo`` needs.

``maker_scripted`` (in ``dev/``, beside the package) holds the scripted Messages API,
the Claude Code CLI runner and the demo's scenario. Here: :mod:`harness.scenarios` (the
demo's scenario re-exported, plus the turns and builders only tests use),
:mod:`harness.sdk_client` (driving the CLI through claude-agent-sdk, where
AskUserQuestion can be answered) and :mod:`harness.engine_fakes` (the headless
engine's scripted model, planner, reviewer, ledger and budget, for unit tests).
"""
