"""Git as maker runs it: every git by its absolute path with the repository's programs off
(``git_run``), an agent's read-only git rewritten to run so (``git_programs``), a tree of
the working tree (``git_tree``), the worktrees maker owns (``worktrees``)."""
