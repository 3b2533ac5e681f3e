"""A step decided by a vote among its executors' answers.

- ``run_record``: one run of the step in progress: turns, launches, ballots.
- ``runs``: who works on the step in progress.
- ``ballots``: each executor's answer a ballot; the vote counted.
"""
