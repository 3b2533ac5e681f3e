"""The executor's own phases and limits.

- ``orient``: before the work starts, is the plan still right? (the edit gate, deviations)
- ``sweep``: what an accepted handoff's edge-case sweep changes downstream.
- ``limits``: the executor's limits on one tool call, for both front ends.
"""
