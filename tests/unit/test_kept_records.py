"""The kept store's invariants, in one place, and the tests that hold them.

A long-lived reader (the headless engine: ``PlanStore.full_read_every`` > 0) keeps the
plan it loaded last (``store/snapshot.py``) and every step file it parsed
(``store/step_cache.py``) and hands the kept records out again, so that a load of a
1,000-step plan costs what maker changed since, not the plan's size
(``benchmarks/bench_engine.py``: per step at 1,000 steps within 1.5x of that at 10).
What makes that safe:

1. **A kept store loads what a fresh one loads.** After any change maker makes, in this
   process or another (its journal names the files; the generation token tells of other
   processes: ``store/changes.py``), at once; after a hand edit, once
   ``changes.FULL_EVERY`` has passed since it (every file is listed and checked at least
   that often). A problem is reported as the full validation reports it, every problem
   at once. Held by ``test_kept_store_agrees.py`` (whatever maker does, and however),
   ``test_kept_store.py``, ``test_changes.py``.
2. **A file's stamp alone is trusted only once it is settled.** A parse is reused on the
   file's (inode, size, mtime, ctime) only after its bytes were seen unchanged while
   the stamp was older than the coarsest clock tick, and than how far the file
   system's clock may run behind maker's (``step_cache.SETTLED_NS``); until then it is
   compared by its bytes. An approval seal is checked again when the step
   file, its handoff or the plan's ``created_at`` changes. Held by
   ``test_step_cache.py`` and ``test_step_cache_coarse_clock.py``.
3. **What is kept is read-only, all the way down.** The records in ``plan.steps`` (and
   ``plan.find``) may be the kept ones, shared by every plan loaded since: any change of
   one raises, be it an attribute, its ``meta`` at any depth, its ``depends_on``, its
   spec or a list in the spec (``records.kept``, ``yaml_cleaner/frozen.py``).
   ``StoredPlan.get`` hands out a copy to change (its ``meta`` and ``depends_on`` its
   own; its spec shared, and never changed in place: a record is given a new one), after
   checking that step's file again, so a hand edit just before is not written over.
   Held by this file, ``test_step_cache.py::test_records_handed_out_are_copies``,
   ``test_changes.py::test_the_kept_records_cannot_be_changed_in_place`` and the hand
   edit tests of ``test_kept_store.py``.
4. **What is derived from kept records is shared, and read-only too.** ``handoff_heads``
   is a read-only mapping (its ``compute`` returns what cannot change); the schedule
   (``executor/state/schedule.py``) knows an unchanged kept record by its identity, and any
   other record by its spec, status and dependencies. Held by this file and
   ``test_kept_schedule.py``.
5. **Each load's plan is its own.** ``plan.steps`` is a new list at every load; ``get``
   puts its copy there, in this plan only.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from harness.plan_strategies import yaml_like
from harness.step_plans import complete, linear, make_step, write
from maker.errors import Problem
from maker.executor.launch.previous_work import _key
from maker.handoff.against_plan import check_output
from maker.store import changes
from maker.store.plan_store import PlanStore
from maker.store.records import StepRecord
from maker.store.step_file import render_step
from maker.yaml_cleaner.dump import dump_yaml
from maker.yaml_cleaner.frozen import FrozenDict, FrozenList, freeze, thaw


def engine_store(root: Path) -> PlanStore:
    store = PlanStore(root)
    store.full_read_every = changes.FULL_EVERY
    return store


def _with_nested_meta(store: PlanStore) -> None:
    record = store.load().get(2)
    record.meta["revision_notes"] = [{"by": "me", "notes": ["first"]}]
    store.save_step(record)


def _kept(store: PlanStore, n: int) -> StepRecord:
    store.load()  # (the first load's records are its own: it parsed them)
    record = store.load().find(n)
    assert record is not None and record.__dict__.get("_kept")
    return record


EDITS: dict[str, Callable[[StepRecord], Any]] = {
    "meta[key] =": lambda r: r.meta.__setitem__("started_by", "someone"),
    "meta.pop": lambda r: r.meta.pop("revision_notes"),
    "meta.update": lambda r: r.meta.update(forced=True),
    "meta.setdefault": lambda r: r.meta.setdefault("reasons", []),
    "del meta[key]": lambda r: r.meta.__delitem__("revision_notes"),
    "meta |=": lambda r: r.meta.__ior__({"forced": True}),
    "meta.clear": lambda r: r.meta.clear(),
    "a list in meta, append": lambda r: r.meta["revision_notes"].append("x"),
    "a list in meta, +=": lambda r: r.meta["revision_notes"].__iadd__(["x"]),
    "a list in meta, [0] =": lambda r: r.meta["revision_notes"].__setitem__(0, "x"),
    "a mapping in a list in meta": lambda r: r.meta["revision_notes"][0].__setitem__("by", "x"),
    "a list in a mapping in a list": lambda r: r.meta["revision_notes"][0]["notes"].append("x"),
    "depends_on.append": lambda r: r.depends_on.append(99),
    "depends_on.sort": lambda r: r.depends_on.sort(reverse=True),
    "depends_on[0] =": lambda r: r.depends_on.__setitem__(0, 99),
    "status =": lambda r: setattr(r, "status", "complete"),
    "meta =": lambda r: setattr(r, "meta", {}),
    "del meta": lambda r: delattr(r, "meta"),
    "spec.title =": lambda r: setattr(r.spec, "title", "Else"),
    "del spec.title": lambda r: delattr(r.spec, "title"),
    "spec.primary_tools.append": lambda r: r.spec.primary_tools.append("Bash"),
    "spec.input_variables.clear": lambda r: r.spec.input_variables.clear(),
    "spec.depends_on.append": lambda r: r.spec.depends_on.append(99),
}


def _seen(record: StepRecord) -> Any:
    s = record.spec
    return (record.status, record.depends_on, record.meta, s.title, s.primary_tools,
            s.input_variables, s.depends_on)


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_kept_record_cannot_be_changed_and_later_loads_are_untouched(
        project: Path, edit: str) -> None:
    store = engine_store(linear(project, 3).root)
    _with_nested_meta(store)
    kept = _kept(store, 2)
    before = _seen(PlanStore(store.root).load().get(2))
    with pytest.raises((TypeError, AttributeError), match="StoredPlan.get"):
        EDITS[edit](kept)
    assert _seen(store.load().get(2)) == before
    assert _seen(store.load().find(2)) == before  # type: ignore[arg-type]


def test_the_copy_get_hands_out_is_changeable_all_the_way_down_and_saved(
        project: Path) -> None:
    store = engine_store(linear(project, 3).root)
    _with_nested_meta(store)
    kept = _kept(store, 2)
    mine = store.load().get(2)
    mine.meta["revision_notes"][0]["notes"].append("second")
    mine.meta["forced"] = True
    mine.depends_on.append(1)
    store.save_step(mine)
    assert kept.meta["revision_notes"] == [{"by": "me", "notes": ["first"]}]
    assert kept.depends_on == [1]
    again = PlanStore(store.root).load().get(2)
    assert again.meta["revision_notes"][0]["notes"] == ["first", "second"]
    assert store.load().get(2).meta == again.meta


def test_a_kept_record_renders_as_a_fresh_one(project: Path) -> None:
    store = engine_store(write(project, [make_step(1, 2, schema={"result": "string"}),
                                         make_step(2, -1)]).root)
    _with_nested_meta(store)
    kept = _kept(store, 2), _kept(store, 1)
    fresh = PlanStore(store.root).load()
    assert [render_step(r) for r in kept] == [render_step(fresh.get(2)), render_step(
        fresh.get(1))]


def test_the_gate_names_a_kept_steps_schema_mapping(project: Path) -> None:
    store = engine_store(write(project, [make_step(1, -1, schema={"result": "string"})]).root)
    kept = _kept(store, 1)
    assert isinstance(kept.spec.output_schema, FrozenDict)
    problems: list[Problem] = []
    check_output(store.load(), kept, "complete", {}, problems)
    assert "{result: string}" in str(problems[0])


def test_the_kept_handoff_heads_are_read_only(project: Path) -> None:
    store = engine_store(linear(project, 3).root)
    complete(store, 1)
    heads = store.handoff_heads(_key)
    assert heads
    with pytest.raises(TypeError):
        heads["09-stray.md"] = None  # type: ignore[index]
    assert store.handoff_heads(_key) == PlanStore(store.root).handoff_heads(_key) != {}


# -- read-only YAML data (maker.yaml_cleaner.frozen) ----------------------------------

_DICT_EDITS: list[Callable[[dict[Any, Any]], Any]] = [
    lambda d: d.__setitem__("k", 1), lambda d: d.__delitem__(next(iter(d), "k")),
    lambda d: d.__ior__({"k": 1}), lambda d: d.clear(), lambda d: d.pop("k", None),
    lambda d: d.popitem(), lambda d: d.setdefault("k", 1), lambda d: d.update(k=1)]
_LIST_EDITS: list[Callable[[list[Any]], Any]] = [
    lambda v: v.__setitem__(0, 1), lambda v: v.__delitem__(0), lambda v: v.__iadd__([1]),
    lambda v: v.__imul__(2), lambda v: v.append(1), lambda v: v.clear(),
    lambda v: v.extend([1]), lambda v: v.insert(0, 1), lambda v: v.pop(),
    lambda v: v.remove(1), lambda v: v.reverse(), lambda v: v.sort()]


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for v in value.values() if isinstance(value, dict) else value:
            yield from _containers(v)


def _plain(value: Any) -> bool:
    return all(type(c) in (dict, list) for c in _containers(value))


@settings(max_examples=200, deadline=None)
@given(data=yaml_like)
def test_frozen_data_is_the_data_and_refuses_every_change(data: Any) -> None:
    frozen = freeze(data)
    assert frozen == data and json.dumps(frozen) == json.dumps(data)
    assert dump_yaml(frozen) == dump_yaml(data)
    assert all(type(c) in (FrozenDict, FrozenList) for c in _containers(frozen))
    for container in _containers(frozen):
        for edit in _DICT_EDITS if isinstance(container, dict) else _LIST_EDITS:
            with pytest.raises(TypeError, match="change a copy"):
                edit(container)
    assert frozen == data
    for mine in (thaw(frozen), copy.copy(frozen), copy.deepcopy(frozen),
                 pickle.loads(pickle.dumps(frozen))):
        assert mine == data and _plain(mine)
    assert freeze(frozen) is frozen
