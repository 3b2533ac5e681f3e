"""What follows a subagent's return, or a person's answer.

- ``verdict``: maker's verdict on a subagent that returned.
- ``outcome``: where the step ended up, and what the main agent does next.
- ``blocked``: a step with unmet dependencies: the person decides.
- ``revision``: a rejection with notes runs the step again.
"""
