"""The seeds' public path for the context builder (seed 000, M6, docs/architecture.md#the-seeds):
``from maker.executor.context_builder import ContextBuilder``.

The code lives in ``maker.executor.launch.context_builder``; this path stays whatever
moves inside (a public import path is an API).
"""

from maker.executor.launch.context_builder import ContextBuilder, referenced_outputs

__all__ = ["ContextBuilder", "referenced_outputs"]
