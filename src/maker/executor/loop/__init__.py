"""``/maker:run``: the whole plan in the interactive client, driven by code; and the plan's
status.

The main agent remembers no protocol: after every verdict, answer and ``/maker:run``,
maker reads ``plans/`` and says the one thing to do next.

- ``next_action``: the one next action from where ``plans/`` stands: launch an executor
  (or a wave of them, or the reviewer), ask the person, wait for a background subagent,
  or end (the plan is done, or a person is needed). It starts the steps it launches.
- ``words``: what the main agent reads per step (the verdict, the question, the answer),
  short and of the same size at step 1 and step 100.
- ``report``: the run's closing report, and the run in ``maker status``.
- ``status_view``: ``maker status``: the plan, its steps, what runs and what waits.

The run's record is ``maker.executor.state.run``.
"""
