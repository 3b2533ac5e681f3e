"""The headless engine: `maker run` over claude-agent-sdk (issue 8)."""
