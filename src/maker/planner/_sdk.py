"""Kept for imports: reading an SDK answer lives in ``maker.core.sdk``."""

from maker.core.sdk import SdkAnswer, read_answer, translate_error

__all__ = ["SdkAnswer", "read_answer", "translate_error"]
