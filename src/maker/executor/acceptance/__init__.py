"""A checked handoff on its way to counting: accepted, reviewed when large, approved.

- ``accept``: the step's transition out of in-progress.
- ``review_route``: whether a review is due, and who decides the step.
- ``review``: the independent review, recorded by code.
- ``review_loop``: the reviewer's verdict applied (RED goes back, bounded).
- ``approval``: the gate: a person, or a policy a person set.
"""
