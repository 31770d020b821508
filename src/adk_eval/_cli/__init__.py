"""The `adk-eval` command line: `main` (the click group) and `entry` (the console script).

One module per group of commands (`_running`, `_stored`, `_servers`), registered
by `_main`; what they share is in `_common` (exit codes, errors, option groups),
`_selection` (the options of ``run``), `_finish` (reports and exit), `_serving`
(the options and start of a server) and `_output` (what is printed).
"""

from ._main import entry, main

__all__ = ["entry", "main"]
