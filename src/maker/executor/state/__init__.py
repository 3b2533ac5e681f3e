"""Where a step stands, and the moves between.

- ``lifecycle``: statuses and transitions: start, fail, reset; the default step.
- ``schedule``: which steps can run now; which a conditional step skipped.
- ``owner``: who owns the step in progress, and when the owner is gone.
- ``attempts``: how often a deliverable or a stop was refused, and what the bound does.
- ``kept_work``: a worktree step's work, kept before maker forgets its worktree.
- ``run``: a ``/maker:run``'s sealed record, and the policy a person chose for it.
- ``stretch``: a run's stretch in maker's engine: its lock, when it began, how it ended.
"""
