"""The headless engine (``maker run``): the orchestrator over claude-agent-sdk, its
cost ledger and budget, and the step executor's limits in an SDK session."""
