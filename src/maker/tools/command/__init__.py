"""The command model: the bash lexer (``shell``), the programs that run others
(``runners``), what a command line runs (``command_walk``), the readers' policy
(``readonly``, ``reader_options``) and maker's own commands (``maker_commands``)."""
