"""Read-only YAML data: mappings and lists that refuse every change.

What a long-lived reader shares between callers (the records ``maker.store`` keeps
between loads) is frozen, all the way down, so that an edit can never reach another
caller: :func:`freeze` gives read-only copies, :func:`thaw` plain ones to change. A
frozen mapping is a ``dict`` and a frozen list a ``list`` (they compare, ``isinstance``,
``json.dumps`` and ``dump_yaml`` as those do); any method or operator that would change
one raises :class:`TypeError`, saying where to get a copy. ``copy``, ``deepcopy`` and
``pickle`` give plain, changeable data.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn, SupportsIndex

__all__ = ["FrozenDict", "FrozenList", "freeze", "thaw"]

_SCALARS = frozenset({str, int, float, bool, type(None)})
HINT = "read-only data shared by every caller: change a copy (the store's: StoredPlan.get)"


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{HINT} (a {type(self).__name__} cannot be changed)")


class FrozenDict(dict[Any, Any]):
    """A ``dict`` that refuses every change (see the module's docstring)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return dict, (thaw(self),)


class FrozenList(list[Any]):
    """A ``list`` that refuses every change (see the module's docstring)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return list, (thaw(self),)


def freeze(value: Any) -> Any:
    """``value`` (YAML data) with every mapping and list in it frozen; scalars and
    what is already frozen are shared, not copied."""
    kind = type(value)
    if kind in _SCALARS or kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList([freeze(v) for v in value])
    if isinstance(value, tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A copy of ``value`` (YAML data, frozen or not) deep enough that an edit of it never
    reaches ``value``: plain dicts and lists (scalars are shared: they cannot change)."""
    kind = type(value)
    if kind is dict or kind is FrozenDict:
        return {k: v if type(v) in _SCALARS else thaw(v) for k, v in value.items()}
    if kind is list or kind is FrozenList:
        return [v if type(v) in _SCALARS else thaw(v) for v in value]
    if isinstance(value, (dict, list, set)):  # (not what YAML gives: the slow way)
        return copy.deepcopy(value)
    return value
