"""Sealed records: any change, a missing seal or another key is detected; the key is
private, outside the project, made once even by racing processes."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from maker.store.seal import check, key_path, seal

RECORD = {"step": 2, "status": "passed", "commands": [{"command": "true", "exit_code": 0}]}


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "maker"


def test_a_sealed_record_checks_and_its_key_is_private(data_dir: Path) -> None:
    sealed = seal(RECORD)
    assert sealed["seal"].startswith("hmac-sha256:") and check(sealed)
    assert {k: v for k, v in sealed.items() if k != "seal"} == RECORD
    assert key_path() == data_dir / "seal.key"
    assert stat.S_IMODE(key_path().stat().st_mode) == 0o600
    assert len(key_path().read_bytes()) == 32
    assert check(dict(reversed(list(sealed.items()))))  # key order does not matter
    assert check(seal(sealed)) and seal(sealed) == sealed  # resealing is idempotent


@pytest.mark.parametrize("change", [
    lambda r: r.pop("seal"),
    lambda r: r.update(seal="hmac-sha256:" + "0" * 64),
    lambda r: r.update(seal=None),
    lambda r: r.update(status="failed"),
    lambda r: r["commands"][0].update(exit_code=1),
    lambda r: r.update(extra=True),
])
def test_any_change_breaks_the_seal(change: Any) -> None:
    import copy

    record = copy.deepcopy(seal(RECORD))
    change(record)
    assert not check(record)


@pytest.mark.parametrize("value", [None, [], "text", {"seal": 5}, {"a": float("nan"),
                                                                    "seal": "hmac-sha256:x"}])
def test_check_never_raises(value: Any) -> None:
    assert check(value) is False


def test_another_key_does_not_check(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sealed = seal(RECORD)
    monkeypatch.setenv("XDG_DATA_HOME", str(data_dir.parent / "elsewhere"))
    assert not check(sealed)


def test_a_broken_key_file_fails_closed(data_dir: Path) -> None:
    sealed = seal(RECORD)
    key_path().write_bytes(b"short")
    assert not check(sealed)
    with pytest.raises(ValueError, match="not a maker sealing key"):
        seal(RECORD)


@pytest.mark.parametrize(("env", "where"), [
    ({"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/maker/seal.key"),
    ({"HOME": "/h"}, "/h/.local/share/maker/seal.key"),
    # Not CLAUDE_PLUGIN_DATA: hooks have it, the Bash tool that runs `maker verify` not.
    ({"CLAUDE_PLUGIN_DATA": "/p", "HOME": "/h"}, "/h/.local/share/maker/seal.key"),
])
def test_the_key_lives_in_makers_data_dir(env: dict[str, str], where: str) -> None:
    assert key_path(env) == Path(where)


def test_racing_first_uses_agree_on_one_key() -> None:
    with ThreadPoolExecutor(8) as pool:
        seals = list(pool.map(lambda _: seal(RECORD)["seal"], range(16)))
    assert len(set(seals)) == 1
    assert [p.name for p in key_path().parent.iterdir()] == ["seal.key"]  # no temp left


_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda kids: st.one_of(st.lists(kids, max_size=3),
                           st.dictionaries(st.text(max_size=5), kids, max_size=3)),
    max_leaves=12)


@given(record=st.dictionaries(st.text(max_size=6), _json, max_size=5))
def test_every_record_round_trips_through_json(record: dict[str, Any]) -> None:
    import json

    assert check(json.loads(json.dumps(seal(record))))
