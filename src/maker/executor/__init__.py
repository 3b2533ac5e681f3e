"""A step's protocol, in the order a step meets it. Each sub-package imports only from the
ones above it in this list (``tests/unit/test_architecture.py``: ``EXECUTOR_LAYERS``):

- ``rules``: each per-step rule, each vote rule, each wording of what to do next.
- ``state``: a step's status and its moves; what may run now; who owns it; retry counts;
  kept worktree work; a ``/maker:run``'s record.
- ``protocol``: the executor's own phases and limits: orient, the edge-case sweep, the
  limits on one tool call.
- ``acceptance``: a handoff accepted, reviewed when large, approved.
- ``votes``: a step decided by a vote: its runs, its ballots.
- ``launch``: what an executor is given (the brief) and the headless session that runs it.
- ``parallel``: steps side by side: waves, worktrees, landing a change.
- ``verdicts``: what follows a subagent's return or a person's answer.
- ``loop``: ``/maker:run`` (the next action, its words, its report) and ``maker status``.

The seeds' paths are public and stay whatever moves inside: ``maker.executor.context_builder``
and ``maker.executor.agent_runner`` re-export their homes in ``launch``
(``tests/unit/test_seed_paths.py`` imports every path the seeds write).
"""
