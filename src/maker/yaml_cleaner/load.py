"""The one guarded YAML parse: every YAML text maker reads goes through ``load_yaml``.

Text from a model, a step file edited by hand, a handoff or a schema is untrusted, and
a plain ``yaml.safe_load`` of it can crash or stall the process: libyaml's composer
overflows the C stack on deep nesting (a segfault), aliases can expand to billions of
values, a number of thousands of digits hits Python's limit. ``load_yaml`` refuses each
with a ``YAMLCleanError`` that says what is wrong, and keys written twice too. Nothing
else in ``src/`` calls a YAML loader (``tests/unit/test_yaml_guard.py`` checks).
"""

from __future__ import annotations

import itertools
import re
import sys
from typing import Any

import yaml

from maker.errors import YAMLCleanError

__all__ = ["bracket_depth", "load_yaml"]

_FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]+")


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
            start = exc.context_mark.line + 1 if exc.context_mark is not None else None
            if start is not None and start != line:
                # (where the mistake starts: an unclosed quote is found at the end)
                what += f", which starts at line {start}"
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


def bracket_depth(text: str) -> int:
    """How deep ``[``/``{`` brackets nest in ``text`` (quotes are not read: an upper
    bound for flow-style YAML). Iterative, so any depth is measured without recursion."""
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(0, max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets))))


def _may_nest_deeply(text: str) -> bool:
    """True when ``text`` might nest more than ``_C_MAX_DEPTH`` levels (a cheap bound)."""
    if len(text) <= _C_MAX_DEPTH:
        return False
    if bracket_depth(text) > _C_MAX_DEPTH:
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
