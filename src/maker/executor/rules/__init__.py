"""The rules of a step, each written once for both front ends.

- ``step_rules``: retry bounds, when a review is due, who approves.
- ``vote_rules``: which steps vote and what a vote compares.
- ``instructions``: one wording for each thing the main agent is told to do next.
"""
