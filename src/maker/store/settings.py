"""A person's settings for a plan: ``plans/settings.yaml``, optional, read by both front ends.

    # plans/settings.yaml (every key optional; these are the defaults)
    max_fix_attempts: 2        # a failed verification goes back to the step this often
    max_review_attempts: 1     # RED review findings go back to the step this often
    gate_attempts: 3           # handoffs the gate may refuse in one run of a step (1-7)
    session_timeout: 1800      # seconds one SDK session of ``maker run`` may take (0: none)
    subagent_timeout: 3000     # seconds one of the plugin's subagents may run (0: none)
    boundaries: []             # globs of architectural areas: a step that changes files
                               # in two or more is reviewed, as a 5+ file step is
    parallel: 4                # steps /maker:step runs at once when they may (1: one)
    shared: []                 # globs of files every step may touch (beside maker's own
                               # list of lockfiles, migrations, generated code): a step
                               # that writes one never runs beside another
    boundary: auto             # the executor's Bash in an OS boundary: auto (where the
                               # machine can make one), required (refused without one),
                               # off (the command guard alone)
    network: auto              # the network in the box: auto (loopback only for a step
                               # whose tools only read and for maker verify's checks,
                               # the machine's for a step that writes), on, off
    main_boundary: auto        # any other agent's Bash (the main one's) in its own OS
                               # boundary while a plan exists: auto (where the machine
                               # can make one), off
    undecided_code_vote: fail  # a vote on a code step that no behaviour won (``maker
                               # run``): fail the step with the matrix, or ask (the
                               # step stays in progress, the run stops for a person)

The file lives under ``plans/``, which no step executor may write (the PreToolUse
guard, nor any agent's file tools or Bash), so it is a person's word, like the approval
policy; no plan field sets any of it, since a model writes the plan. It is read on use, never
cached across commands, and a hand edit that breaks it is an error naming the key and
the fix (``PlanFileError``), never a silent default: a typo must not quietly turn a
bound off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maker.core.bounded import read_text_file
from maker.errors import InputError, PlanFileError, YAMLCleanError

__all__ = ["BOUNDARY_CHOICES", "MAIN_BOUNDARY_CHOICES", "NETWORK_CHOICES", "SETTINGS_FILE",
           "UNDECIDED_CHOICES", "Settings", "load_settings"]

SETTINGS_FILE = "settings.yaml"
_LIMIT = 256 * 1024  # a settings file is a few lines; this is generous
_GATE_MAX = 7  # Claude Code ends a turn after 8 consecutive blocks


@dataclass(frozen=True)
class Settings:
    """The tunables of seed 004's step protocol, with the seed's defaults
    (docs/architecture.md#the-seeds)."""

    max_fix_attempts: int = 2
    max_review_attempts: int = 1
    gate_attempts: int = 3
    session_timeout: float = 1800.0  # 0: no limit
    subagent_timeout: float = 3000.0  # the plugin's subagents, each (0: no limit)
    boundaries: tuple[str, ...] = field(default_factory=tuple)
    shared: tuple[str, ...] = field(default_factory=tuple)
    parallel: int = 4  # steps /maker:step starts at once when they may
    boundary: str = "auto"  # the executor's Bash in an OS boundary: auto, required, off
    network: str = "auto"  # the network in the box: auto, on, off
    main_boundary: str = "auto"  # the main agent's Bash in its own OS boundary: auto, off
    undecided_code_vote: str = "fail"  # an undecided vote on a code step: fail, ask
    source: str = ""  # the file they came from ("" = the defaults)


# key -> (lowest allowed, highest allowed, what it means)
_INTS: dict[str, tuple[int, int, str]] = {
    "max_fix_attempts": (0, 20, "times a failed verification goes back to the step"),
    "max_review_attempts": (0, 20, "times RED review findings go back to the step"),
    "gate_attempts": (1, _GATE_MAX, "handoffs the gate may refuse in one run of a step"),
    "parallel": (1, 16, "steps /maker:step runs at once when they may"),
}
BOUNDARY_CHOICES = ("auto", "required", "off")
NETWORK_CHOICES = ("auto", "on", "off")
MAIN_BOUNDARY_CHOICES = ("auto", "off")
UNDECIDED_CHOICES = ("fail", "ask")
_CHOICES = {"boundary": (BOUNDARY_CHOICES, "the executor's Bash in an OS boundary"),
            "network": (NETWORK_CHOICES, "the network in the step's box"),
            "main_boundary": (MAIN_BOUNDARY_CHOICES, "the main agent's Bash in an OS boundary"),
            "undecided_code_vote": (UNDECIDED_CHOICES, "what an undecided vote on a code "
                                    "step does")}
_TIMES = {"session_timeout": 1800, "subagent_timeout": 3000}  # key -> the default, shown
_KEYS = (*_INTS, *_TIMES, "boundaries", "shared", *_CHOICES)


def load_settings(plans_root: Path) -> Settings:
    """The settings in ``plans_root/settings.yaml``; the defaults when there is none.
    Raises PlanFileError listing every problem of a file that is there but wrong."""
    path = Path(plans_root) / SETTINGS_FILE
    try:
        text = read_text_file(path, _LIMIT)
    except FileNotFoundError:
        return Settings()
    except (OSError, InputError, UnicodeDecodeError) as e:
        raise PlanFileError(path, f"cannot be read ({e})",
                            fix="make it a small UTF-8 YAML file, or remove it") from None
    from maker.yaml_cleaner.load import load_yaml

    try:
        data = load_yaml(text) if text.strip() else {}
    except YAMLCleanError as e:  # any parse failure is the file's problem
        raise PlanFileError(path, f"is not valid YAML ({_first_line(e)})",
                            fix="write one `key: value` per line") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PlanFileError(path, "must be a mapping of settings",
                            fix="write one `key: value` per line, e.g. `max_fix_attempts: 2`")
    return _settings(path, data)


def _settings(path: Path, data: dict[Any, Any]) -> Settings:
    problems: list[PlanFileError] = []
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _KEYS:
            problems.append(PlanFileError(path, f"{_show(key)} is not a maker setting",
                                          _show(key, 60), "use one of " + ", ".join(_KEYS)))
        elif key in _INTS:
            low, high, what = _INTS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                problems.append(PlanFileError(
                    path, f"must be a whole number from {low} to {high} ({what}), "
                    f"not {_show(value)}", key, f"`{key}: {min(max(low, 2), high)}`"))
            else:
                values[key] = value
        elif key in _CHOICES:
            choices, what = _CHOICES[key]
            if isinstance(value, bool):  # (YAML reads a bare on/off as true/false)
                value = "on" if value else "off"
            if value not in choices:
                problems.append(PlanFileError(
                    path, f"must be one of {', '.join(choices)} ({what}), not "
                    f"{_show(value)}", key, f"`{key}: {choices[0]}`"))
            else:
                values[key] = value
        elif key in _TIMES:
            ok = (not isinstance(value, bool) and isinstance(value, (int, float))
                  and 0 <= value <= 7 * 24 * 3600)
            if not ok:
                problems.append(PlanFileError(
                    path, f"must be a number of seconds from 0 (no limit) to 604800, "
                    f"not {_show(value)}", key, f"`{key}: {_TIMES[key]}`"))
            else:
                values[key] = float(value)
        else:
            globs = _globs(value)
            if globs is None:
                problems.append(PlanFileError(
                    path, "must be a list of path globs relative to the project root, "
                    f"not {_show(value)}", key, f"`{key}: [\"src/api/**\", \"src/db/**\"]`"))
            else:
                values[key] = globs
    if len(problems) == 1:
        raise problems[0]
    if problems:
        shown = "; ".join(str(p).removeprefix(f"{path}: ") for p in problems[:10])
        more = f"; and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise PlanFileError(path, shown + more, problems=problems[:100])
    return Settings(**values, source=str(path))


def _globs(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > 1000:
        return None
    out = []
    for item in value:
        if not isinstance(item, str) or not item.strip() or len(item) > 1000 \
                or item.strip().startswith("/") or ".." in Path(item.strip()).parts:
            return None
        out.append(item.strip())
    return tuple(out)


def _show(value: Any, limit: int = 80) -> str:
    """A value as an error shows it: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
