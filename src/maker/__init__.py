"""maker: structured plans, one isolated step at a time, with code-checked handoffs."""

__version__ = "0.1.0"

__all__ = ["__version__"]
