"""The end of a step's brief: the handoff its executor must answer with, as a template."""

from __future__ import annotations

from typing import Any

from maker.core.flow import decides_next
from maker.core.models import PlanStep, schema_keys
from maker.errors import YAMLCleanError
from maker.red_flag.red_flagger import DEFAULT_MAX_CHARS
from maker.yaml_cleaner.dump import dump_yaml
from maker.yaml_cleaner.load import load_yaml

__all__ = ["handoff_section", "handoff_template"]


def handoff_section(spec: PlanStep) -> str:
    keys = schema_keys(spec.output_schema)
    rules = [
        "## Your final message: the handoff",
        "",
        "Your final message is your deliverable, checked by code. It must be the handoff "
        "YAML below and nothing else: no prose before or after it, no code fences.",
        "",
        f"- `step` is {spec.step}.",
        "- `status` is `complete` (done, with `output`), `blocked` (you cannot go on: say "
        "why in `blockers`) or `failed`.",
    ]
    if keys:
        rules.append("- `output` must have the keys " + ", ".join(f"`{k}`" for k in keys)
                     + " (from the output schema); extra keys are allowed.")
    else:
        rules.append("- `output` is a mapping that matches the output schema.")
    if decides_next(spec):
        rules.append("- This is a conditional step: `output.next_step` must be the number "
                     "of the step you chose to run next, or -1 to end the plan.")
    rules += [
        "- `discoveries`, `decisions` and `blockers` are lists of short, durable facts: "
        "they are added to NOTES.md for every later step.",
        "- `for_next_agent` is what the next agent must know first.",
        "- The sweep, once verification passes: look for the edge cases a green suite "
        "does not show, and record it in `sweep` (`considered`: each case you checked; "
        "`found`: what you found, `[]` when nothing): a complete handoff of a step that "
        "can write is refused without it. A case a later step must handle also goes in "
        "`edge_cases` (`- step: N` / `note: ...`; maker writes it into that step's Edge "
        "cases section); a change of scope in `proposals` (never applied: the user "
        "accepts or drops it).",
        f"- Keep it under {DEFAULT_MAX_CHARS:,} characters: a longer answer is discarded.",
        "- If the gate rejects it, you receive every problem with its fix: correct them "
        "and send the whole handoff again.",
        "",
        "```yaml",
        handoff_template(spec).rstrip(),
        "```",
        "",
        "(The fence above only marks the template: do not put one around your answer.)",
    ]
    return "\n".join(rules)


def handoff_template(step: PlanStep) -> str:
    """The handoff YAML the executor of ``step`` fills in, with its step number and the
    output keys of its ``output_schema`` (and ``next_step`` for a conditional step).

    Placeholders are ``<...>`` strings, which the gate rejects where a number is due:
    a template sent back unfilled does not pass.
    """
    keys = schema_keys(step.output_schema)
    types = _schema_types(step.output_schema)
    out_lines: list[str] = []
    if keys is None:
        output_head = (f"output:  # becomes {step.output_variable}: a mapping that matches "
                       "the output schema in the brief")
        out_lines.append("  <key>: <value>")
    elif not keys and not decides_next(step):
        output_head = f"output: {{}}  # becomes {step.output_variable}; the schema asks no keys"
    else:
        output_head = (f"output:  # becomes {step.output_variable} for later steps; extra "
                       "keys are allowed")
        for key in keys:
            out_lines += _indent(dump_yaml({key: _placeholder(types.get(key))}), "  ")
    if decides_next(step) and "next_step" not in (keys or []):
        out_lines.append("  next_step: <the step number to run next, or -1 to end the plan>")
    elif decides_next(step):
        out_lines = [line + "  # the step number to run next, or -1 to end the plan"
                     if line.startswith("  next_step:") else line for line in out_lines]
    lines = [
        f"step: {step.step}",
        "status: complete  # or: blocked, failed",
        output_head,
        *out_lines,
        "summary: <what you did and how it turned out, in a few sentences>",
        "discoveries:  # durable facts later steps need",
        "  - <a fact>",
        "decisions:  # choices you made, and why",
        "  - <a decision>",
        "blockers: []  # what stops progress; required when status is blocked",
        "for_next_agent: <what the next agent must know first>",
        "files_changed:  # EVERY file the step changed: maker measures them",
        "  - <path>",
        "evidence:  # from `maker verify`: each command and its exit code",
        "  - command: <command>",
        "    exit_code: 0",
        "sweep:  # once verification passes: the edge cases a green suite does not show",
        "  considered:",
        "    - <an edge case you checked>",
        "  found: []  # what the sweep found",
        "edge_cases: []  # for later steps: - step: N / note: <the edge case>",
        "proposals: []  # changes of scope, for the user to accept or drop",
    ]
    return "\n".join(lines) + "\n"


def _schema_types(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict):
        return {str(k): v for k, v in schema.items()}
    if isinstance(schema, str):
        try:
            data = load_yaml(schema)
        except YAMLCleanError:
            return {}
        if isinstance(data, dict):
            return {str(k): v for k, v in data.items()}
    return {}


def _placeholder(type_: Any) -> Any:
    if isinstance(type_, dict):
        return {str(k): _placeholder(v) for k, v in type_.items()} or "<mapping>"
    if isinstance(type_, list):
        return [_placeholder(type_[0])] if type_ else ["<item>"]
    if type_ is None or type_ == "":
        return "<value>"
    return f"<{type_}>"


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + line for line in text.rstrip("\n").split("\n")]
