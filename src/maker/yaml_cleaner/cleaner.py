"""Turn a model's raw answer into YAML data, repairing what models really send.

Models wrap YAML in code fences, put prose before and after it, send a BOM, CRLF
line ends or tab indentation. ``YAMLCleaner.clean`` returns ``(data, was_repaired)``;
``was_repaired`` is True when anything beyond transport noise (BOM, CRLF, trailing
blank lines) had to be removed. In strict mode a repair is refused: the MAKER paper
found that flagging a malformed answer beats repairing it.

Every failure is a ``YAMLCleanError`` naming what was wrong and the line, never a
raw parser traceback. Anchors and aliases are allowed, but an answer that uses more
aliases than ``max_aliases`` (an alias bomb) is refused before it is expanded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from maker.errors import YAMLCleanError
from maker.yaml_cleaner.load import load_yaml

__all__ = ["YAMLCleaner"]


# A fence closes at the indentation it opened with, so a fenced block nested inside
# the YAML (a command in a `|` text, indented deeper) does not cut the document short.
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)[ \t]*(?P<lang>[\w+-]*)[^\n]*\n"
                    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
# Any indentation: for answers whose fences are indented unevenly.
_LOOSE_FENCE = re.compile(r"^[ \t]*(?P<fence>```+|~~~+)[ \t]*(?P<lang>[\w+-]*)[^\n]*\n"
                          r"(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
_OPEN_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n", re.MULTILINE)
# A line that can start a YAML mapping document: `key:` or `"key":` or `---`.
_DOC_START = re.compile(r"^(?:---\s*$|[A-Za-z_][\w.-]*:(?:\s|$)|\"[^\"]+\":(?:\s|$))")
# A line that can continue a document: indented, a key, a list item, a comment, blank.
_DOC_LINE = re.compile(r"^(?:\s|[A-Za-z_][\w.-]*:(?:\s|$)|\"[^\"]+\":(?:\s|$)|- |-$|#|$)")
_LEADING_TABS = re.compile(r"^(\t+)", re.MULTILINE)
_YAML_LANGS = {"", "yaml", "yml"}


class YAMLCleaner:
    """Extract and parse the YAML document in a model's answer.

    ``strict=True`` refuses any repair (fences, prose, tabs) with a YAMLCleanError.
    """

    def __init__(self, strict: bool = False, max_aliases: int = 100) -> None:
        self.strict = strict
        self.max_aliases = max_aliases

    def clean(self, raw: str | bytes) -> tuple[Any, bool]:
        """Return ``(data, was_repaired)`` for a raw answer.

        Raises YAMLCleanError when the text holds no parseable YAML (or, in strict
        mode, when it would need repair).
        """
        text = _decode(raw)
        text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        if not text.strip():
            raise YAMLCleanError("the answer is empty: expected a YAML document")

        first_error: YAMLCleanError | None = None
        fallback: tuple[Any, bool] | None = None
        for body, why in _candidates(text):
            body, tab_fix = _untab(body)
            notes = [*why, *(["tab indentation"] if tab_fix else [])]
            try:
                data = load_yaml(body, self.max_aliases)
            except YAMLCleanError as exc:
                first_error = first_error or exc
                continue
            if not _looks_structured(data, body):
                # Prose parses as a YAML string (or as a mapping of prose keys):
                # keep it as a last resort and look for a real document first.
                if not why and fallback is None:
                    fallback = (data, bool(notes))
                continue
            if notes and self.strict:
                raise YAMLCleanError(
                    "the answer needed repair (" + ", ".join(notes) + "); strict mode "
                    "accepts only a bare YAML document"
                )
            return data, bool(notes)
        if fallback is not None:
            return fallback
        assert first_error is not None
        raise first_error

    def clean_mapping(self, raw: str | bytes) -> tuple[dict[str, Any], bool]:
        """Like ``clean``, but the document must be a mapping (``key: value`` at the top)."""
        data, repaired = self.clean(raw)
        if not isinstance(data, dict):
            kind = "prose" if isinstance(data, str) else type(data).__name__
            raise YAMLCleanError(
                f"expected a YAML mapping (key: value lines) but the answer is {kind}; "
                "answer with the YAML document only"
            )
        return data, repaired

    async def parse(self, raw: str | bytes) -> tuple[Any, bool]:
        """Async spelling of ``clean`` for modules that run in an event loop."""
        return self.clean(raw)


def _decode(raw: str | bytes) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YAMLCleanError(
            f"the answer is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            line,
        ) from None


def _looks_structured(data: Any, text: str) -> bool:
    """A mapping or list, and not prose that YAML read as ``{"Here is the plan": None}``.

    Prose is a bare line ``words with spaces:`` in the text; a quoted key with a space
    (``'0 0': null``, as a YAML writer spells it) is data.
    """
    if isinstance(data, list):
        return True
    if not isinstance(data, dict):
        return False
    spaced = {k.strip() for k, v in data.items()
              if v is None and isinstance(k, str) and " " in k.strip()}
    return not spaced or not spaced & _bare_keys(text)


def _bare_keys(text: str) -> set[str]:
    """The lines that are only an unquoted key and its colon, as prose reads to YAML."""
    keys = set()
    for line in text.split("\n"):
        line = line.strip()
        if line.endswith(":") and line[0] not in "'\"#":
            keys.add(line[:-1].rstrip())
    return keys


def _candidates(text: str) -> Iterator[tuple[str, list[str]]]:
    """The texts to try, best first, each with the repairs it took.

    Lazy: a bare document (the usual case) is parsed before any repair is looked for.
    """
    yield text, []
    fences = list(_FENCE.finditer(text)) or list(_LOOSE_FENCE.finditer(text))
    yaml_fences = [m for m in fences if m.group("lang").lower() in _YAML_LANGS]
    # The last YAML fence is usually the final answer; earlier ones are examples.
    for m in reversed(yaml_fences or fences):
        yield m.group("body"), ["code fence"]
    if not fences:
        opened = list(_OPEN_FENCE.finditer(text))
        if opened:  # an opening fence that was never closed (truncated answer)
            yield text[opened[-1].end():], ["unclosed code fence"]
    extracted = _strip_prose(text)
    if extracted is not None and extracted != text:
        yield extracted, ["prose around the YAML"]


def _strip_prose(text: str) -> str | None:
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _DOC_START.match(ln)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and _DOC_LINE.match(lines[end]):
        end += 1
    return "\n".join(lines[start:end]).strip("\n") + "\n"


def _untab(text: str) -> tuple[str, bool]:
    if "\t" not in text or not _LEADING_TABS.search(text):
        return text, False
    return _LEADING_TABS.sub(lambda m: "  " * len(m.group(1)), text), True
