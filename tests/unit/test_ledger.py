"""The cost ledger (``plans/ledger.jsonl``), the run's budget, and cost in ``maker status``."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.step_plans import linear
from maker.cli.main import cli
from maker.core.clock import utc_now
from maker.core.sdk import token_usage
from maker.engine.budget import Budget
from maker.engine.ledger import LINE_LIMIT, Call, Ledger
from maker.engine.parts import EngineParts
from maker.errors import BudgetExceededError, InputError
from maker.store.plan_store import PlanStore


def call(kind: str = "executor", step: int | None = 1, cost: float = 0.01, **kw: object) -> Call:
    values: dict[str, object] = dict(
        kind=kind, step=step, attempt=1, cost_usd=cost, duration_ms=1200, input_tokens=300,
        output_tokens=50, model="claude-test", error=None, at=utc_now(), session_id="s-1")
    values.update(kw)
    return Call(**values)  # type: ignore[arg-type]


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(PlanStore(tmp_path / "plans"))


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


# -- recording and reading -----------------------------------------------------------


def test_record_and_read_back(ledger: Ledger) -> None:
    calls = [call("planner", None, 0.02, session_id=None),
             call("executor", 1, 0.0123, error="the CLI exited with 1"),
             call("fix", 1, 0.5, attempt=2, model=None)]
    for c in calls:
        ledger.record(c)
    assert ledger.calls() == calls
    assert ledger.path == ledger.store.root / "ledger.jsonl"
    lines = ledger.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["error"] == "the CLI exited with 1"


def test_the_cache_tokens_are_kept_and_an_older_line_without_them_reads_back(
        ledger: Ledger) -> None:
    cached = call(cache_creation_tokens=1200, cache_read_tokens=34000)
    ledger.record(cached)
    older = {k: v for k, v in call().to_dict().items()
             if k not in ("cache_creation_tokens", "cache_read_tokens")}
    with open(ledger.path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(older) + "\n")
    first, second = ledger.calls()
    assert first == cached and (second.cache_creation_tokens, second.cache_read_tokens) == (0, 0)
    with pytest.raises(ValueError, match="cache_read_tokens"):
        call(cache_read_tokens=-1)


def test_a_call_is_recorded_with_the_tokens_as_the_sdk_split_them(ledger: Ledger) -> None:
    parts = EngineParts(runner_factory=None, ledger=ledger, call_type=Call)  # type: ignore[arg-type]
    usage = token_usage({"input_tokens": 120, "output_tokens": 45, "cache_read_input_tokens":
                         9000, "cache_creation_input_tokens": 300, "service_tier": "standard",
                         "bogus_tokens": True, "negative_tokens": -3})
    assert usage == {"input_tokens": 120, "output_tokens": 45, "cache_read_input_tokens": 9000,
                     "cache_creation_input_tokens": 300}
    parts.record("executor", 2, 1, cost_usd=0.01, tokens=sum(usage.values()), usage=usage)
    parts.record("executor", 2, 2, tokens=77)  # (no split reported: the total as input)
    split, total = ledger.calls()
    assert (split.input_tokens, split.output_tokens, split.cache_creation_tokens,
            split.cache_read_tokens) == (120, 45, 300, 9000)
    assert (total.input_tokens, total.output_tokens) == (77, 0)


def test_a_call_of_unknown_cost_stops_a_budget_and_is_said_in_the_totals(
        ledger: Ledger) -> None:
    budget = Budget(5.0, ledger)
    ledger.record(call(cost=0.01))
    budget.check()  # (known costs, well within)
    ledger.record(call(cost=0.0, cost_known=False))
    with pytest.raises(BudgetExceededError, match="1 call.* no cost the SDK reported"):
        budget.check()
    summary = ledger.summary()
    assert summary.unknown == 1 and "at least $0.0100" in summary.line()
    assert "1 call(s) of unknown cost" in summary.line()
    Budget(None, ledger).check()  # (no budget: nothing to tell)
    own = Budget(5.0, ledger, own_calls=True)  # (the earlier unknown is not its own)
    own.check()


def test_no_ledger_reads_as_nothing_spent(ledger: Ledger) -> None:
    assert not ledger.exists()
    assert ledger.calls() == [] and ledger.total() == 0.0 and ledger.by_step() == {}


def test_totals_and_cost_per_step(ledger: Ledger) -> None:
    for c in (call("planner", None, 0.25), call("executor", 1, 0.125),
              call("flagged", 1, 0.0625), call("reviewer", 2, 0.5),
              call("executor", 2, 1.0, error="budget")):
        ledger.record(c)
    assert ledger.total() == pytest.approx(1.9375)
    assert ledger.by_step() == {None: 0.25, 1: 0.1875, 2: 1.5}
    summary = ledger.summary()
    assert (summary.calls, summary.planner_usd, summary.steps_usd) == (5, 0.25, 1.6875)
    assert summary.line() == "spent: $1.9375 in 5 calls (planner $0.2500, steps $1.6875)"


def test_totals_follow_appends_from_elsewhere(ledger: Ledger) -> None:
    """The tally is kept between reads: a line another process appends is counted, and a
    file that is replaced or edited is read again from its start."""
    ledger.record(call(cost=1.0))
    assert ledger.total() == 1.0
    Ledger(ledger.store).record(call(cost=2.0))
    assert ledger.total() == 3.0
    first = ledger.path.read_text(encoding="utf-8").splitlines()[0]
    ledger.path.write_text(first.replace('"cost_usd": 1.0', '"cost_usd": 4.0') + "\n"
                           + first + "\n", encoding="utf-8")
    assert ledger.total() == 5.0
    replacement = ledger.path.with_name("new.jsonl")  # a file put in its place
    replacement.write_text(first.replace('"cost_usd": 1.0', '"cost_usd": 7.0') + "\n"
                           + first + "\n", encoding="utf-8")
    os.replace(replacement, ledger.path)
    assert ledger.total() == 8.0


def test_torn_last_line_is_skipped_and_kept_apart(ledger: Ledger) -> None:
    ledger.record(call(cost=1.0))
    whole = json.dumps(call(cost=2.0).to_dict())
    with open(ledger.path, "ab") as fh:  # a crash in the middle of a write
        fh.write(whole[: len(whole) // 2].encode())
    assert [c.cost_usd for c in ledger.calls()] == [1.0]
    assert ledger.total() == 1.0
    ledger.record(call(cost=4.0))
    assert [c.cost_usd for c in ledger.calls()] == [1.0, 4.0]
    assert ledger.total() == 5.0
    lines = ledger.path.read_bytes().split(b"\n")
    assert lines[1] == whole[: len(whole) // 2].encode()  # its own line, not glued to the next


def test_a_line_that_lost_only_its_newline_counts_once_completed(ledger: Ledger) -> None:
    ledger.record(call(cost=1.0))
    with open(ledger.path, "ab") as fh:
        fh.write(json.dumps(call(cost=2.0).to_dict()).encode())  # no newline yet
    assert ledger.total() == 1.0 and len(ledger.calls()) == 1
    ledger.record(call(cost=4.0))
    assert ledger.total() == 7.0 and Ledger(ledger.store).total() == 7.0
    assert [c.cost_usd for c in ledger.calls()] == [1.0, 2.0, 4.0]


def test_broken_lines_are_skipped(ledger: Ledger) -> None:
    good = call(cost=1.0)
    ledger.record(good)
    bad = [b"not json", b"[1, 2]", b"{}", b"\xff\xfe", b"",
           json.dumps(dict(good.to_dict(), kind="wizard")).encode(),
           json.dumps(dict(good.to_dict(), cost_usd=-1)).encode(),
           json.dumps(dict(good.to_dict(), cost_usd="1")).encode(),
           json.dumps(dict(good.to_dict(), step=True)).encode(),
           b'{"cost_usd": NaN}', b"[" * 100_000, b"x" * (LINE_LIMIT + 10)]
    with open(ledger.path, "ab") as fh:
        fh.write(b"\n".join(bad) + b"\n")
    ledger.record(call(cost=2.0, step=2))
    assert [c.cost_usd for c in ledger.calls()] == [1.0, 2.0]
    assert ledger.total() == 3.0 and ledger.by_step() == {1: 1.0, 2: 2.0}
    assert Ledger(ledger.store).total() == 3.0  # read from scratch, too


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_ledger_that_is_not_a_file_is_refused(ledger: Ledger, kind: str) -> None:
    """Refused with a message, and never a hang on a FIFO that nobody writes."""
    if kind == "directory":
        ledger.path.mkdir(parents=True)
    else:
        ledger.path.parent.mkdir(parents=True)
        os.mkfifo(ledger.path)
    with pytest.raises(InputError, match="not a regular file|is a"):
        ledger.record(call())
    for read in (ledger.total, ledger.calls):
        with pytest.raises(InputError):
            read()


def test_a_call_is_validated() -> None:
    with pytest.raises(ValueError, match="kind"):
        call("wizard")
    with pytest.raises(ValueError, match="cost_usd"):
        call(cost=float("nan"))
    with pytest.raises(ValueError, match="attempt"):
        call(attempt=-1)


def test_a_long_error_is_cut(ledger: Ledger) -> None:
    ledger.record(call(error="x" * 100_000))
    (read,) = ledger.calls()
    assert read.error is not None and 2000 <= len(read.error) < 2100


def test_bounded_memory_on_a_huge_ledger(ledger: Ledger) -> None:
    """A ledger of 256 MiB (one endless line, then real calls) is read as a stream."""
    ledger.path.parent.mkdir(parents=True)
    with open(ledger.path, "wb") as fh:
        fh.truncate(256 * 2**20)  # sparse: zeros, no newline
    ledger.record(call(cost=1.0))
    ledger.record(call(cost=2.0, step=2))
    tracemalloc.start()
    try:
        total, calls = ledger.total(), ledger.calls()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == 3.0 and [c.cost_usd for c in calls] == [1.0, 2.0]
    assert peak < 16 * 2**20


# -- the budget ----------------------------------------------------------------------


def test_budget_arithmetic(ledger: Ledger) -> None:
    budget = Budget(1.0, ledger)
    assert (budget.spent, budget.remaining, budget.for_call()) == (0.0, 1.0, 1.0)
    ledger.record(call("planner", None, 0.25))
    ledger.record(call("flagged", 1, 0.25))
    ledger.record(call("executor", 1, 0.125, error="the CLI crashed"))
    assert budget.spent == 0.625  # flagged and failed work count
    assert budget.remaining == budget.for_call() == 0.375
    assert not budget.exhausted
    budget.check()
    ledger.record(call("fix", 1, 2.0))
    assert budget.remaining == 0.0 and budget.for_call() == 0.0 and budget.exhausted


def test_unlimited_budget(ledger: Ledger) -> None:
    budget = Budget(None, ledger)
    ledger.record(call(cost=1000.0))
    assert budget.spent == 1000.0
    assert budget.remaining is None and budget.for_call() is None
    assert not budget.exhausted
    budget.check()


def test_a_continued_run_counts_what_the_earlier_run_spent(ledger: Ledger) -> None:
    ledger.record(call(cost=0.75))
    budget = Budget(1.0, Ledger(ledger.store))  # a new run, a new Ledger object
    assert budget.spent == 0.75 and budget.for_call() == 0.25


def test_check_names_spent_limit_and_how_to_continue(ledger: Ledger) -> None:
    ledger.record(call(cost=0.1))
    ledger.record(call(cost=0.2))
    budget = Budget(0.3, ledger)  # 0.1 + 0.2 is not quite 0.3 in floats: still spent
    assert budget.exhausted
    with pytest.raises(BudgetExceededError) as caught:
        budget.check()
    text = str(caught.value)
    assert "$0.3000 of $0.3000" in text
    assert "maker run --max-budget-usd X" in text and "higher X" in text


def test_a_float_sum_just_below_the_limit_is_spent(ledger: Ledger) -> None:
    ledger.record(call(cost=0.7))
    ledger.record(call(cost=0.1))  # 0.7 + 0.1 == 0.7999999999999999
    budget = Budget(0.8, ledger)
    assert budget.exhausted
    with pytest.raises(BudgetExceededError):
        budget.check()


def test_an_exact_budget_is_not_exhausted_early(ledger: Ledger) -> None:
    ledger.record(call(cost=0.5))
    budget = Budget(0.5000001, ledger)
    assert not budget.exhausted
    budget.check()


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_a_budget_must_be_an_amount(ledger: Ledger, bad: float) -> None:
    with pytest.raises(ValueError, match="max_usd"):
        Budget(bad, ledger)


# -- the plan's ledger, archived with it ---------------------------------------------


def test_a_new_plan_archives_the_old_ledger(project: Path) -> None:
    store = linear(project, 2)
    Ledger(store).record(call(cost=1.5))
    linear(project, 3)  # a new plan
    assert Ledger(store).total() == 0.0 and not store.ledger_path.exists()
    (archived,) = store.archived()
    assert Ledger(PlanStore(archived)).total() == 1.5


def test_the_archive_is_undone_with_the_plan_it_belongs_to(project: Path) -> None:
    store = linear(project, 2)
    Ledger(store).record(call(cost=1.5))
    with pytest.raises(RuntimeError), store.lock():
        store._archive_current(utc_now())
        assert not store.ledger_path.exists()
        raise RuntimeError("crash")
    assert Ledger(store).total() == 1.5


# -- maker status --------------------------------------------------------------------


def test_status_without_a_ledger_shows_no_cost(project: Path) -> None:
    linear(project, 2)
    text = run("status")
    assert text.exit_code == 0, text.output
    assert "cost" not in text.output and "spent" not in text.output
    data = json.loads(run("status", "--json").output)
    assert "cost" not in data and all("cost_usd" not in s for s in data["steps"])


def test_status_shows_cost_per_step_and_in_total(project: Path) -> None:
    store = linear(project, 3)
    ledger = Ledger(store)
    ledger.record(call("planner", None, 0.05))
    ledger.record(call("executor", 1, 0.0123))
    ledger.record(call("flagged", 1, 0.01))
    ledger.record(call("executor", 2, 0.2))
    result = run("status")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line for line in lines if line.startswith("step"))
    assert header.split()[:4] == ["step", "title", "status", "cost"]
    row = {line.split()[0]: line for line in lines if line[:1].isdigit()}
    assert "$0.0223" in row["1"] and "$0.2000" in row["2"]
    assert row["3"].split()[-2:] == ["-", "2"]  # no cost yet; depends on step 2
    assert "spent: $0.2723 in 4 calls (planner $0.0500, steps $0.2223)" in lines
    data = json.loads(run("status", "--json").output)
    assert [s["cost_usd"] for s in data["steps"]] == [pytest.approx(0.0223), 0.2, 0.0]
    assert data["cost"]["calls"] == 4
    assert data["cost"]["total_usd"] == pytest.approx(0.2723)
    assert data["cost"]["by_step"]["planner"] == 0.05


def test_record_is_one_append_and_fsync_under_the_lock(
        ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    from maker.store import atomic

    seen: list[tuple[str, int, bytes, bool]] = []
    real_write, real_fsync = os.write, os.fsync

    def locked() -> bool:
        return any(k.startswith(str(ledger.store.state_dir.resolve())) for k in atomic._held)

    def write(fd: int, data: bytes | memoryview) -> int:
        seen.append(("write", fd, bytes(data), locked()))
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        seen.append(("fsync", fd, b"", locked()))
        real_fsync(fd)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    for cost in (1.0, 2.0):  # the ledger created, then appended to
        seen.clear()
        ledger.record(call(cost=cost))
        (line,) = [(fd, data) for what, fd, data, _ in seen
                   if what == "write" and b"cost_usd" in data]
        fd, data = line
        assert data.count(b"\n") == 1 and json.loads(data)["cost_usd"] == cost
        after = [(what, on, held) for what, on, _, held in seen
                 if on == fd][1:2]  # what happened to the ledger's fd after the write
        assert after == [("fsync", fd, True)]
        assert all(held for what, on, _, held in seen if on == fd)


def test_a_read_parses_only_what_was_appended_since(ledger: Ledger,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget check at step 1,000 costs what it costs at step 1."""
    from maker.engine import ledger as module

    for _ in range(50):
        ledger.record(call(cost=0.5))
    assert ledger.total() == 25.0
    parsed: list[bytes] = []
    real = module._parse

    def counting(line: bytes) -> Call | None:
        parsed.append(line)
        return real(line)

    monkeypatch.setattr(module, "_parse", counting)
    ledger.record(call(cost=0.5))
    assert ledger.total() == 25.5 and ledger.by_step() == {1: 25.5}
    assert len(parsed) == 1
