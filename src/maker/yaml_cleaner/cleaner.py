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

import itertools
import re
import sys
from collections.abc import Iterator
from typing import Any

import yaml

from maker.errors import YAMLCleanError

__all__ = ["YAMLCleaner", "load_yaml"]

_FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

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
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]+")
_LEADING_TABS = re.compile(r"^(\t+)", re.MULTILINE)
_YAML_LANGS = {"", "yaml", "yml"}


class _UniqueKeys:
    """Refuse a mapping that names a key twice: YAML would keep the last one silently
    (``status: failed`` … ``status: complete`` reads as complete)."""

    allow_duplicates = False

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        if self.allow_duplicates:
            return super().construct_mapping(node, deep)  # type: ignore[misc]
        seen: set[str] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            if key_node.value in seen:
                raise YAMLCleanError(
                    f"the key {key_node.value!r} appears twice in one mapping; keep only one",
                    key_node.start_mark.line + 1)
            seen.add(key_node.value)
        return super().construct_mapping(node, deep)  # type: ignore[misc]


class _FastLoader(_UniqueKeys, _FAST_LOADER):  # type: ignore[valid-type,misc]
    pass


class _SafeLoader(_UniqueKeys, yaml.SafeLoader):
    pass


class _AliasLimitedLoader(_UniqueKeys, yaml.SafeLoader):
    """A pure-Python safe loader that refuses more than ``max_aliases`` alias uses."""

    max_aliases = 100

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._alias_count = getattr(self, "_alias_count", 0) + 1
            if self._alias_count > self.max_aliases:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise YAMLCleanError(
                    f"more than {self.max_aliases} YAML aliases (*name): refusing a "
                    "possible alias bomb; write the values out instead",
                    mark.line + 1,
                )
        return super().compose_node(parent, index)


def load_yaml(text: str, max_aliases: int = 100, unique_keys: bool = True) -> Any:
    """Parse one YAML document safely (C loader when possible); YAMLCleanError on failure.

    The one guarded parse every YAML text in maker goes through: deep nesting, alias
    bombs, huge numbers and (unless ``unique_keys=False``) repeated keys are refused.
    """
    try:
        aliased = bool(_ANCHOR.search(text))
        if aliased:
            loader: _UniqueKeys = _AliasLimitedLoader(text)
            loader.max_aliases = max_aliases  # type: ignore[attr-defined]
        else:
            loader = (_SafeLoader if _may_nest_deeply(text) else _FastLoader)(text)
        loader.allow_duplicates = not unique_keys
        try:
            data = loader.get_single_data()  # type: ignore[attr-defined]
        finally:
            loader.dispose()  # type: ignore[attr-defined]
        if aliased:
            _check_expanded_size(data)
        return data
    except YAMLCleanError:
        raise
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's own limit on digits
            limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
            raise YAMLCleanError(f"invalid YAML: a value cannot be read: a number has more "
                                 f"than {limit} digits; quote it to keep it as text, or "
                                 "write a shorter one") from None
        raise YAMLCleanError(f"invalid YAML: a value cannot be read ({exc})") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            what = f"{exc.problem} ({exc.context})"
        raise YAMLCleanError(f"invalid YAML: {what}", line) from None
    except yaml.YAMLError as exc:
        raise YAMLCleanError(f"invalid YAML: {exc}") from None
    except RecursionError:
        raise YAMLCleanError("invalid YAML: nested too deeply") from None


# libyaml's composer recurses in C once per nesting level and overflows the C stack
# (a segfault, not an exception) past about 20,000 levels, and far sooner in a thread
# with a small stack. Text that may nest deeper than this goes to the pure-Python
# loader, whose recursion Python checks (RecursionError: "nested too deeply").
_C_MAX_DEPTH = 500
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_BRACKET_STEP = [0] * 256
_BRACKET_STEP[ord("[")] = _BRACKET_STEP[ord("{")] = 1
_BRACKET_STEP[ord("]")] = _BRACKET_STEP[ord("}")] = -1


def _may_nest_deeply(text: str) -> bool:
    """True when ``text`` might nest more than ``_C_MAX_DEPTH`` levels (a cheap bound)."""
    if len(text) <= _C_MAX_DEPTH:
        return False
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    if len(brackets) > _C_MAX_DEPTH and max(
            itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets))) > _C_MAX_DEPTH:
        return True
    if " " * _C_MAX_DEPTH in text:  # block indentation that deep
        return True
    # Compact block nesting (`- - - x`, `? ? x`) takes an indicator a level on one line.
    return any(len(line) > _C_MAX_DEPTH
               and line.count("-") + line.count("?") + line.count(":") > _C_MAX_DEPTH
               for line in text.split("\n"))


_MAX_EXPANDED_NODES = 1_000_000


def _check_expanded_size(data: Any) -> None:
    """Refuse aliased data whose expansion is huge (nested aliases multiply)."""
    seen = 0
    stack = [data]
    while stack:
        node = stack.pop()
        seen += 1
        if seen > _MAX_EXPANDED_NODES:
            raise YAMLCleanError(
                "YAML aliases expand to more than 1,000,000 values: refusing a possible "
                "alias bomb; write the values out instead"
            )
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


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
            if not _looks_structured(data):
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


def _looks_structured(data: Any) -> bool:
    """A mapping or list, and not prose that YAML read as ``{"Here is the plan": None}``."""
    if isinstance(data, list):
        return True
    if not isinstance(data, dict):
        return False
    return not any(v is None and isinstance(k, str) and " " in k.strip() for k, v in data.items())


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
