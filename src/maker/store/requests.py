"""What the user typed after ``/maker:<command>``, saved verbatim.

Free text must reach the model intact and never run: Claude Code substitutes
``$ARGUMENTS`` raw into a command's ``!`…``` lines (shell injection) and escapes
``!`` in the body. So a ``UserPromptSubmit`` hook saves the raw prompt here, keyed
by session, before the command expands, and the command's one ``!`…``` line names
only the session id. Nothing the user typed is ever part of a shell line.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from maker.core.bounded import read_regular_file
from maker.core.paths import data_dir
from maker.errors import InputError, RequestError
from maker.store.atomic import atomic_write

__all__ = ["DECISION_COMMANDS", "load_request", "load_request_record", "parse_command",
           "save_request", "split_step_args"]

# The /maker: commands that carry a person's decision (``maker.hooks.decisions`` records them).
DECISION_COMMANDS = ("approve", "reject", "policy", "proposal")

_COMMAND = re.compile(r"\A\s*/maker:([\w-]+)(?:[ \t\r\n]+(.*))?\Z", re.S)
_MAX_AGE_S = 7 * 24 * 3600


def parse_command(prompt: str) -> tuple[str, str] | None:
    """``("plan", "the task…")`` for ``/maker:plan the task…``; None for other prompts."""
    m = _COMMAND.match(prompt)
    if not m:
        return None
    return m.group(1), (m.group(2) or "").strip()


def _path(directory: Path, session_id: str) -> Path:
    safe = "".join(c for c in session_id if c.isalnum() or c in "-_")[:100] or "no-session"
    return directory / "requests" / f"{safe}.json"


def save_request(session_id: str, prompt: str, directory: Path | None = None, *,
                 prompt_id: str = "", transcript_path: str = "") -> Path | None:
    """Save a ``/maker:`` prompt's command and raw arguments; None for other prompts.

    ``prompt_id`` (the client's id of this prompt, the turn) and ``transcript_path``
    (the session's transcript) let the command's line tie the step it starts to this
    turn and judge whether another session that owns the step is still alive.
    """
    parsed = parse_command(prompt)
    if parsed is None:
        return None
    directory = directory or data_dir()
    path = _path(directory, session_id)
    data = {"command": parsed[0], "arguments": parsed[1], "saved_at": time.time(),
            "prompt_id": prompt_id, "transcript_path": transcript_path}
    atomic_write(path, json.dumps(data, ensure_ascii=False), durable=False)
    _prune(path.parent)
    return path


def load_request(session_id: str, command: str, directory: Path | None = None,
                 max_age_s: float | None = None) -> str | None:
    """The raw arguments of this session's latest ``/maker:<command>``, or None.

    ``max_age_s`` ignores an older request: a command line runs within moments of
    the prompt that expanded it, so an old one belongs to an earlier prompt.
    """
    data = load_request_record(session_id, command, directory, max_age_s)
    args = data.get("arguments") if data else None
    return args if isinstance(args, str) else None


def load_request_record(session_id: str, command: str, directory: Path | None = None,
                        max_age_s: float | None = None) -> dict[str, Any] | None:
    """The whole saved record of this session's latest ``/maker:<command>`` (see
    :func:`load_request`), or None."""
    try:
        data = json.loads(read_regular_file(_path(directory or data_dir(), session_id)))
    except (OSError, ValueError, InputError):
        return None
    if not isinstance(data, dict) or data.get("command") != command:
        return None
    saved = data.get("saved_at")
    if max_age_s is not None and (not isinstance(saved, (int, float))
                                  or time.time() - saved > max_age_s):
        return None
    return data


def _prune(folder: Path) -> None:
    cutoff = time.time() - _MAX_AGE_S
    for old in folder.glob("*.json"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass


# A step as seed 004 (docs/architecture.md#the-seeds) names one: `3`, `step 3`, `#3`, `execute
# step 3`; `the next step`.
_VERB = r"(?:(?:execute|run|do|start)\s+)?"
_STEP_ARG = re.compile(_VERB + r"(?:step\s*)?#?([0-9]+)(?=\s|[.:,;]|\Z)[.:,;]?", re.I | re.A)
_NEXT_ARG = re.compile(_VERB + r"(?:the\s+)?next(?:\s+(?:ready\s+)?step)?(?=\s|[.:,;]|\Z)[.:,;]?",
                       re.I | re.A)


_NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def split_step_args(text: str, command: str = "step") -> tuple[int | None, bool, str]:
    """``"3 --force make it fast"`` → ``(3, True, "make it fast")``; also ``step 3``,
    ``#3``, ``execute step 3``. Nothing at all, or ``the next step``: ``(None, False,
    "")``, the next ready step.

    The form is ``/maker:<command> [N] [--force] [notes]``, and notes follow a number:
    text that starts with anything else (``two``, ``abc``, ``2abc``) raises
    RequestError rather than run the next ready step with it as notes.
    """
    number: int | None = None
    text = text.strip()
    named = _STEP_ARG.match(text) or _NEXT_ARG.match(text)
    if named:
        number = int(named.group(1)) if named.re is _STEP_ARG else None
        text = text[named.end():]
    text = text.strip()
    force = False
    if text.split(maxsplit=1)[:1] == ["--force"]:
        force = True
        text = text[len("--force"):].strip()
    if number is None and text and not (named and named.re is _NEXT_ARG):
        word = text.split(maxsplit=1)[0]
        guess = _NUMBER_WORDS.get(word.casefold().strip(".,:;"))
        use = f"/maker:{command} {guess if guess is not None else 'N'}"
        rest = f"/maker:{command} N your notes" if guess is None else f"{use} your notes"
        alone = (", or /maker:step with no argument for the next ready step"
                 if command == "step" else "")
        raise RequestError(f"`{word[:40]}` is not a step number: use {use}{alone}. Notes "
                           f"follow the step number ({rest}).")
    return number, force, text
