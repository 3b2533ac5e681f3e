"""Every error maker raises on purpose.

    MakerError
    ├── YAMLCleanError            model text that holds no usable YAML (line, what)
    ├── InputError                an input maker refuses to read: too large, not a regular file
    ├── PlanValidationError       a plan that fails the parser or the linter (all problems)
    │   │                         (also a ValueError, as seed 001's parser tests expect)
    │   └── PlanRefusedError      the planner model's plan, refused on every attempt
    ├── PlanFileError             plan files on disk that are broken (file, field, fix; all)
    ├── PlanNotFoundError         no plan where one was looked for
    ├── PlanExistsError           a new plan would destroy one that cannot be archived
    ├── StepError                 a step operation that is not allowed
    │   ├── StepNotFoundError
    │   ├── DependencyError       depends_on not complete (lists what is missing)
    │   └── TransitionError       a status change outside the allowed transitions
    ├── HandoffRejectedError      a handoff that fails the gate (all problems)
    ├── RequestError              a /maker: request whose arguments do not fit its form
    ├── ReviewMissingError        a large step approved without its (approving) review
    ├── VerificationError         verification could not run at all
    ├── LockTimeoutError          another session holds the plan lock
    ├── StateError                plans/ state maker cannot read or repair by itself
    ├── GitError                  a git maker runs that could not run: no git, not in time
    │   └── GitRefusedError       a filter in git's config maker cannot switch off (where, name)
    ├── WorktreeError             a worktree maker needs could not be made, read or removed
    ├── AgentSDKError             a claude-agent-sdk call failed (what failed, what to do)
    │   ├── ClaudeNotFoundError   the Claude Code CLI is not installed
    │   ├── AgentProcessError     the CLI failed or could not be reached (exit code, stderr)
    │   ├── AgentStreamError      the CLI's output could not be read (an SDK/CLI mismatch)
    │   ├── BudgetExceededError   a call stopped by its max_budget_usd, or the run's budget spent
    │   └── SessionTimeoutError   a session of ``maker run`` stopped at its session_timeout
    └── DemoError                 ``maker demo`` off script: not in maker, but in
                                  ``maker_scripted.errors`` (``dev/``), beside the scripted
                                  model that raises it, with its three subclasses

The seeds: docs/architecture.md#the-seeds.

Bad model output is recoverable: the classes that carry a list of problems render
them one per line, each naming where it is and how to fix it, because a model reads
them too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing on every hook
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    class _ProblemFields(NamedTuple):
        field: str
        message: str
        step: int | None = None
        fix: str | None = None
else:  # the same named tuple, made without typing (whose import costs every hook)
    from collections import namedtuple

    _ProblemFields = namedtuple("Problem", ["field", "message", "step", "fix"],
                                defaults=(None, None))

__all__ = [
    "AgentProcessError",
    "AgentSDKError",
    "AgentStreamError",
    "BudgetExceededError",
    "ClaudeNotFoundError",
    "DependencyError",
    "GitError",
    "GitRefusedError",
    "HandoffRejectedError",
    "InputError",
    "LockTimeoutError",
    "MakerError",
    "PlanExistsError",
    "PlanFileError",
    "PlanNotFoundError",
    "PlanRefusedError",
    "PlanValidationError",
    "Problem",
    "RequestError",
    "ReviewMissingError",
    "SessionTimeoutError",
    "StateError",
    "StepError",
    "StepNotFoundError",
    "TransitionError",
    "VerificationError",
    "WorktreeError",
    "YAMLCleanError",
]


class Problem(_ProblemFields):
    """One thing wrong with a plan or handoff, where it is, and how to fix it: ``field``,
    ``message``, ``step`` (None) and ``fix`` (None).

    (A named tuple, immutable and compared by value: a frozen dataclass would import
    ``dataclasses`` on every hook that can raise an error, the Stop hook's included.)"""

    __slots__ = ()

    def __str__(self) -> str:
        where = f"step {self.step}: " if self.step is not None else ""
        text = f"{where}{self.field}: {self.message}"
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


class MakerError(Exception):
    """Base class of every error maker raises on purpose."""


class YAMLCleanError(MakerError):
    """Model text that holds no usable YAML document."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class InputError(MakerError):
    """An input maker refuses to read: over its size limit, or not a regular file
    (``maker.core.bounded``)."""


class _ProblemsError(MakerError):
    what = "problems"

    def __init__(self, problems: Iterable[Problem | str], source: str | None = None) -> None:
        self.problems = [p if isinstance(p, Problem) else Problem("", str(p)) for p in problems]
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.source}: " if self.source else ""
        n = len(self.problems)
        lines = [f"{head}{n} {self.what}{'' if n == 1 else 's'}:"]
        lines += [f"- {_problem_text(p)}" for p in self.problems]
        return "\n".join(lines)


def _problem_text(p: Problem) -> str:
    return str(p) if p.field else p.message


class PlanValidationError(_ProblemsError, ValueError):
    """A plan that fails the parser or the linter. ``problems`` lists every one."""

    what = "plan problem"


class PlanRefusedError(PlanValidationError):
    """The planner model answered ``attempts`` times and the linter refused every answer;
    ``problems`` are those of the last answer (each earlier list went back to the model)."""

    def __init__(self, problems: Iterable[Problem | str], attempts: int) -> None:
        self.attempts = attempts
        super().__init__(problems, source=f"the planner's plan, refused {attempts} "
                                          f"time{'' if attempts == 1 else 's'}")


class HandoffRejectedError(_ProblemsError):
    """A handoff that fails the gate. ``problems`` lists every one."""

    what = "handoff problem"


class PlanFileError(MakerError):
    """A file under plans/ that cannot be read back (often a hand edit).

    ``problems``: every problem found, each a PlanFileError of one problem naming its
    file, field and fix (``[self]`` when this is one); the message lists them all."""

    def __init__(self, path: Path | str, message: str, field: str | None = None,
                 fix: str | None = None,
                 problems: Iterable[PlanFileError] | None = None) -> None:
        self.path = Path(path)
        self.field = field
        self.fix = fix
        self.problems: list[PlanFileError] = list(problems or ()) or [self]
        text = f"{path}: "
        if field:
            text += f"{field}: "
        text += message
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


class PlanNotFoundError(MakerError):
    """No plan where one was looked for."""


class PlanExistsError(MakerError):
    """A new plan would overwrite one that must not be lost."""


class StepError(MakerError):
    """A step operation that is not allowed."""

    def __init__(self, message: str, step: int | None = None) -> None:
        self.step = step
        super().__init__(message)


class StepNotFoundError(StepError):
    """The plan has no step with that number."""


class DependencyError(StepError):
    """A step whose depends_on are not all complete."""

    def __init__(self, step: int, missing: dict[int, str]) -> None:
        self.missing = missing
        listed = ", ".join(f"step {n} ({status})" for n, status in sorted(missing.items()))
        super().__init__(
            f"step {step} depends on steps that are not complete: {listed}. "
            f"Run those first, or pass --force to start anyway (the override is recorded).",
            step,
        )


class TransitionError(StepError):
    """A status change outside pending → in-progress → complete | blocked | failed."""


class RequestError(MakerError):
    """What was typed after a ``/maker:`` command does not fit its form."""


class ReviewMissingError(MakerError):
    """A step that needs the independent review has none (or not an approving one)."""


class VerificationError(MakerError):
    """Verification could not run at all (not: a command that failed)."""


class LockTimeoutError(MakerError):
    """Another session holds the plan lock for too long."""


class StateError(MakerError):
    """plans/ holds state that maker cannot read or repair by itself (the message says
    what a person should do)."""


class GitError(MakerError):
    """A git that maker runs (``maker.tools.git.git_run``) could not run: no git, a config
    git cannot read, or no answer in time."""


class WorktreeError(MakerError):
    """A worktree maker needs (``maker.tools.git.worktrees``) could not be made, read or
    removed."""


class GitRefusedError(GitError):
    """maker runs no git in ``repository``: its config defines the filter ``name``, whose
    programs maker cannot switch off (``-c`` cannot name a filter with ``=`` or a line
    break in its name). Each caller says what this means for it."""

    def __init__(self, repository: Path, name: str) -> None:
        self.repository = repository
        self.name = name
        super().__init__(f"git's config for {repository} defines a filter named {name!r}, "
                         "whose programs maker cannot switch off (`-c` cannot name it), so "
                         "maker runs no git there")


class AgentSDKError(MakerError):
    """A claude-agent-sdk call failed: the CLI could not start, crashed, printed what
    the SDK cannot read, or ended with an error result (not: a bad answer, which is an
    ``AgentResult`` with ``error``). The message says what to do.

    ``cause`` is the SDK's own exception; ``agent`` names the caller ("planner",
    "step 3"); ``cost_usd`` and ``duration_ms`` are what the call spent before it failed
    (a budget counts failed work too); ``session_id`` is set when the CLI reported one;
    ``answer`` is the final answer the call gave before it failed, if any (a budget
    stopped the session after the model answered: what was paid for is not lost);
    ``cost_known`` is True only when a result reported what the call cost: a call that
    failed before one did spent what nobody knows (``cost_usd`` 0 then means nothing).
    """

    def __init__(self, message: str, cause: BaseException | None = None, *,
                 agent: str = "", cost_usd: float = 0.0, duration_ms: int = 0,
                 session_id: str | None = None, answer: str = "",
                 cost_known: bool = False, usage: dict[str, int] | None = None) -> None:
        self.cause = cause
        self.agent = agent
        self.cost_usd = cost_usd
        self.cost_known = cost_known
        self.usage = dict(usage or {})  # (the tokens its result reported, as SdkAnswer's)
        self.duration_ms = duration_ms
        self.session_id = session_id
        self.answer = answer
        super().__init__(f"{agent}: {message}" if agent else message)


class ClaudeNotFoundError(AgentSDKError):
    """The Claude Code CLI binary is not installed where it was looked for."""


class AgentProcessError(AgentSDKError):
    """The Claude Code CLI could not be started or reached, or exited with an error."""

    def __init__(self, message: str, cause: BaseException | None = None,
                 exit_code: int | None = None, stderr: str | None = None,
                 **context: Any) -> None:
        self.exit_code = exit_code
        self.stderr = stderr
        super().__init__(message, cause, **context)


class AgentStreamError(AgentSDKError):
    """The CLI printed output the SDK could not read (usually an SDK/CLI version mismatch)."""


class BudgetExceededError(AgentSDKError):
    """A call reached its ``max_budget_usd`` and the CLI stopped it, or the run's whole
    budget is spent (``maker.engine.ledger.Budget.check``, before a call)."""


class SessionTimeoutError(AgentSDKError):
    """A ``maker run`` session ran past ``session_timeout`` (``plans/settings.yaml``, or
    ``--session-timeout``) and was stopped: its CLI ended, the call is in the ledger."""

