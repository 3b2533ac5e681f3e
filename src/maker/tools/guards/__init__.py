"""The policies over the command model, git and the box: the executor's guard (``guard``:
file tools; ``guard_bash``: Bash; ``git_rules``, ``spill``), a step's tool list
(``permissions``, ``executor_rules``), the main agent's guard (``decision_guard``), a
reading agent's Bash (``reader_bash``)."""
