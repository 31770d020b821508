"""One run of one case, from its parts to its result.

The modules, from the bottom up (each imports only modules listed before it):

* `users`: the user agents of a case, run on their one shared session.
* `system`: the agent under test on an ADK runner, its tool calls intercepted,
  built complete (`System.start`: the policy resolved before the plugin exists).
* `runner`: `EvalRunner`, the same system driven by hand.
* `parts`: everything one run needs, built complete in one place (`RunParts`).
* `scoring`: the case's metrics and live invariants on the run's trace.
* `sessions`: a case of several sessions on one memory, played in turn by the
  loop's own conversation (`SessionRuns`), its trace and per-session scoring.
* `loop`: the simulation loop (`run_eval`).

Nothing is re-exported here: import from the module itself.
"""
