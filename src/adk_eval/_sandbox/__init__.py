"""Sandbox: what a run does outside its mocks, seen and controlled while it runs.

The modules, from the bottom up (each imports only modules listed before it):

* `_loopback`: what counts as this machine (`is_loopback`), the one rule of
  the sandbox and of every server adk-eval starts (`refuse_remote`).
* `_scope`: which run the current code belongs to (`RunScope`, a context
  variable), whether it is inside a model call, and what the sandbox saw.
* `_telemetry`: the user's span and log exporters and litellm's logging
  callbacks get no eval traffic unless a case keeps it (`--telemetry keep`).
* `_channels`: what an audited event does outside the run (a process, a signal,
  a connection, a bind, a name lookup, a file write), or nothing to note.
* `_audit`: the audit hook that sees those, tells which code did them (threads
  the run started included), and refuses them in strict mode.
* `_guard`: one run, watched (`watched`): all of the above around it.

Nothing is re-exported here: import from the module itself.
"""
