"""Tools: what maker's agents are given and what each call may do. Each sub-package
imports only from the ones above it in this list (``tests/unit/test_architecture.py``:
``TOOLS_LAYERS``):

- ``command``: the command model: the bash lexer, what a command line runs (the one walk
  every Bash guard is a policy over), the readers' policy, maker's own commands.
- ``git``: every git maker runs, an agent's read-only git rewritten to run so, the
  worktrees maker owns.
- ``box``: the executor's Bash in an OS boundary (the probe, the spec, the box itself),
  and the one list of protected places the box and the guards share.
- ``guards``: the policies on top: the executor's guard (file tools and Bash), a step's
  tool list, the main agent's guard, a reading agent's Bash.

``registry`` (the tools an agent may be given) is the seeds' public path
(``maker.tools.registry``), below them all.
"""
