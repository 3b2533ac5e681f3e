"""plans/settings.yaml: a person's tunables, with the seed's defaults, and a clear error for
a hand edit that breaks them (never a silent default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maker.errors import PlanFileError
from maker.store.settings import Settings, load_settings


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "settings.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_no_file_gives_the_seed_defaults(tmp_path: Path) -> None:
    s = load_settings(tmp_path)
    assert (s.max_fix_attempts, s.max_review_attempts, s.gate_attempts) == (2, 1, 3)
    assert s.session_timeout == 1800.0 and s.boundaries == () and s.source == ""
    assert s.subagent_timeout == 3000.0


def test_every_key_is_read(tmp_path: Path) -> None:
    s = load_settings(_write(tmp_path, "max_fix_attempts: 4\nmax_review_attempts: 0\n"
                             "gate_attempts: 5\nsession_timeout: 90\n"
                             "subagent_timeout: 600\n"
                             "boundaries: ['src/api/**', src/db/]\n"
                             "shared: [schema.sql]\nparallel: 2\n"))
    assert s == Settings(4, 0, 5, 90.0, 600.0, ("src/api/**", "src/db/"), ("schema.sql",), 2,
                         source=str(tmp_path / "settings.yaml"))


def test_an_empty_file_is_the_defaults(tmp_path: Path) -> None:
    assert load_settings(_write(tmp_path, "# nothing set\n")).gate_attempts == 3


@pytest.mark.parametrize(("text", "words"), [
    ("max_fix_attempt: 3\n", ["'max_fix_attempt' is not a maker setting", "max_fix_attempts"]),
    ("gate_attempts: 8\n", ["gate_attempts", "from 1 to 7"]),
    ("gate_attempts: 0\n", ["gate_attempts", "from 1 to 7"]),
    ("max_fix_attempts: true\n", ["max_fix_attempts", "whole number"]),
    ("max_fix_attempts: '2'\n", ["max_fix_attempts", "whole number"]),
    ("session_timeout: -1\n", ["session_timeout", "seconds"]),
    ("subagent_timeout: soon\n", ["subagent_timeout", "seconds", "`subagent_timeout: 3000`"]),
    ("subagent_timeout: true\n", ["subagent_timeout", "seconds"]),
    ("boundaries: src/api\n", ["boundaries", "list of path globs"]),
    ("boundaries: ['/etc/**']\n", ["boundaries", "relative to the project root"]),
    ("boundaries: ['../x/**']\n", ["boundaries"]),
    ("shared: schema.sql\n", ["shared", "list of path globs"]),
    ("parallel: 17\n", ["parallel", "from 1 to 16"]),
    ("- 1\n- 2\n", ["must be a mapping"]),
    ("a: [\n", ["not valid YAML"]),
])
def test_a_broken_file_names_the_key_and_the_fix(tmp_path: Path, text: str,
                                                 words: list[str]) -> None:
    with pytest.raises(PlanFileError) as e:
        load_settings(_write(tmp_path, text))
    for w in words:
        assert w in str(e.value)
    assert "settings.yaml" in str(e.value) and "fix:" in str(e.value)


def test_every_problem_is_listed(tmp_path: Path) -> None:
    with pytest.raises(PlanFileError) as e:
        load_settings(_write(tmp_path, "gate_attempts: 9\nmax_fix: 1\n"))
    assert len(e.value.problems) == 2


def test_not_a_regular_file_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").mkdir()
    with pytest.raises(PlanFileError, match="cannot be read"):
        load_settings(tmp_path)


def test_an_error_stays_short_whatever_the_file_holds(tmp_path: Path) -> None:
    """QA: a 200 KB value, or 20,000 unknown keys, made megabyte-long errors."""
    with pytest.raises(PlanFileError) as e:
        load_settings(_write(tmp_path, "max_fix_attempts: '" + "x" * 200_000 + "'\n"))
    assert len(str(e.value)) < 1000
    keys = "".join(f"k{i}: 1\n" for i in range(20_000))
    with pytest.raises(PlanFileError) as e:
        load_settings(_write(tmp_path, keys))
    assert len(str(e.value)) < 5000 and "and 19990 more" in str(e.value)
    assert str(e.value).count("settings.yaml") == 1
