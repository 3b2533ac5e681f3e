"""What a step's executor is given, and the headless session that runs it.

- ``brief``: the step, its inputs, its verification; bounded.
- ``context_builder``: the whole outputs of the steps a step references.
- ``previous_work``: the bounded context from earlier steps.
- ``notes_context``: persistent notes across agents.
- ``handoff_template``: the handoff the executor must answer with.
- ``agent_runner``: one isolated claude-agent-sdk session per step (``maker run``).
"""
