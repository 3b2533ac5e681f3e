"""The headless engine (``maker run``): the orchestrator and its cost ledger."""
