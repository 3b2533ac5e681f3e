"""The seeds' public path for the agent runner (seed 000, M6, docs/architecture.md#the-seeds):
``from maker.executor.agent_runner import AgentRunner``.

The code lives in ``maker.executor.launch.agent_runner``; this path stays whatever moves
inside (a public import path is an API).
"""

from maker.executor.launch.agent_runner import AgentRunner

__all__ = ["AgentRunner"]
