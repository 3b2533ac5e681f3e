"""maker: structured plans, one isolated step at a time, with code-checked handoffs.

The packages, in layers: each imports only from the layers below it, never from a
peer in its own layer or from above (imports inside functions and under
``TYPE_CHECKING`` count too)::

            __main__
               │
              cli
               │
         engine   hooks
               │
            executor
               │
            handoff
               │
             verify
               │
             store
               │
            planner
               │
        tools   red_flag
               │
              core
               │
prompts   voting   yaml_cleaner
               │
             errors

- ``errors``: the one exception tree. ``yaml_cleaner``: model text to YAML data.
  ``prompts``: the agents' system prompts. ``voting``: first-to-ahead-by-k.
- ``core``: the plan and handoff models, bounded reads, paths, timestamps, SDK types.
- ``tools``: tool names and the rules for what a step's tools may do; ``red_flag``:
  loose checks of a model's answer.
- ``planner``: plan YAML to a validated ``Plan`` (parser, linter, dependencies, module).
- ``store``: the files under ``plans/`` and maker's data dir, each format in its module.
- ``verify``: the project's verification commands and their sealed runs.
- ``handoff``: a step executor's answer, checked (fields, plan, evidence).
- ``executor``: a step's lifecycle (start, accept, approve, reset), its brief and runner.
- ``engine`` (``maker run``) and ``hooks`` (Claude Code's hook events): the two front
  ends of the executor. (``maker demo``'s scripted model is not in this package: it is
  ``maker_scripted``, in ``dev/``, which the development install brings.)
- ``cli``: the ``maker`` command, a thin adapter over all of the above.

The command that proves it: ``.venv/bin/pytest tests/unit/test_architecture.py``
(its ``LAYERS`` table is this drawing; see also ``docs/architecture.md``).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
