"""Steps side by side, each in a worktree maker owns, and their changes brought back.

- ``waves``: which ready steps run together.
- ``worktree_step``: a step's worktree: made, made whole, pruned.
- ``wave_begin``: ``/maker:step``'s wave started.
- ``land``: a step's change landed file by file, verified on the merged tree.
- ``land_files``: a landing's files, compared as a checkout writes them.
- ``land_gate``: the landing at a complete handoff, within a hook's time.
"""
