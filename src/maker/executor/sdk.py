"""Kept for imports: the SDK's errors are translated in ``maker.core.sdk``."""

from maker.core.sdk import sdk_errors, translate_error

__all__ = ["sdk_errors", "translate_error"]
