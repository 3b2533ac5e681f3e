"""The inputs of a step: the whole outputs of the steps it references, as YAML (seed 000,
docs/architecture.md#the-seeds).

A step names what it reads as ``input_variables`` such as ``step_0_output.user_id``.
The builder takes the step name before the first ``.`` and injects that step's
*whole* output, not just the field: the field alone often lacks the context that
makes it usable, and a model reads a few extra keys at no risk.
"""

from __future__ import annotations

import re
from typing import Any

from maker.core.models import PlanStep
from maker.yaml_cleaner.dump import dump_yaml

__all__ = ["ContextBuilder", "referenced_outputs"]

_STEP_NAME = re.compile(r"^step_(\d+)_output$")


def referenced_outputs(step: PlanStep) -> list[str]:
    """The output names ``step`` reads (``step_0_output.field`` → ``step_0_output``).

    Deduplicated, in step order (``step_2_output`` before ``step_10_output``), with
    names that do not follow the ``step_N_output`` pattern after them, alphabetically.
    """
    names = {var.split(".")[0].strip() for var in step.input_variables if var.strip()}
    return sorted(names, key=_order)


def _order(name: str) -> tuple[int, str]:
    m = _STEP_NAME.match(name)
    return (int(m.group(1)) if m else 1 << 62, name)


class ContextBuilder:
    """Builds the YAML a step receives from the outputs of the steps it references."""

    def build(self, step: PlanStep, step_outputs: dict[str, Any]) -> str:
        """The referenced outputs as one YAML mapping ``{step_N_output: output}``.

        Returns "" when the step has no ``input_variables``. Raises ``KeyError`` naming
        the first output that is missing and the outputs that are available.
        """
        names = referenced_outputs(step)
        if not names:
            return ""
        context: dict[str, Any] = {}
        for name in names:
            if name not in step_outputs:
                available = sorted(step_outputs, key=_order)
                raise KeyError(f"Step output '{name}' not found (step {step.step} reads it). "
                               f"Available: {available}")
            context[name] = step_outputs[name]
        # Keys keep the order the producing step wrote them in: it is usually meaningful.
        return dump_yaml(context)
