"""File-name slugs that are safe whatever the title says: step files, NOTES archives."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["slugify"]

_NON_WORD = re.compile(r"[^\w]+|_+")
_MAX_BYTES = 60


def slugify(title: str, empty: str = "step") -> str:
    """A lower-case, dash-separated name made only of letters and digits.

    Unicode letters are kept (``Café crème`` → ``café-crème``, ``日本語`` stays), so
    no title can name a path outside ``plans/``; an empty result becomes ``empty``.
    """
    text = unicodedata.normalize("NFKC", title).lower()
    slug = _NON_WORD.sub("-", text).strip("-")
    encoded = slug.encode("utf-8")[:_MAX_BYTES]
    slug = encoded.decode("utf-8", errors="ignore").strip("-")
    return slug or empty
