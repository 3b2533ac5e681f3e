"""The executor's Bash in an OS boundary: the probe and the call (``boundary``), what the
box binds (``box_spec``), the script and its setup (``maker-box``, ``box_setup``), and the
one list of protected places the box and the guards share (``protected``, ``runs_later``)."""
