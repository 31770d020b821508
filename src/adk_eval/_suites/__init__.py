"""Suites: many cases, each isolated, on the executor of your choice.

The modules, from the bottom up (each imports only modules listed before it):

* `_plan`: what a suite is asked to do (`SuitePlan`, `check_suite`, the defaults);
  it imports no ADK, so the CLI can print its help without it.
* `_inventory`: what of the cases runs for real (`RunsForReal`: plugins, callbacks,
  toolsets, telemetry), read off the cases before they run.
* `_results`: what it produced (`EvalSuiteResult`, `CaseStats`, `suite_from_results`).
* `_shards`: CI shards: a deterministic share of a suite, and merging their results.
* `_discovery`: finding cases in files, folders and modules (what ``adk-eval`` runs).
* `_faulted`: suite-wide faults: a copy of a case whose mocks fail at one seeded rate.
* `_jobs`: one run of one case (`Job`, `run_job`, attempts and seeds) and the case
  references that carry it to another process (`CaseRef`, `CaseLoader`).
* `_queue`: the job queue and the result collector under every executor.
* `_lanes`: the lanes that run a suite's jobs on this event loop (`InProcess`, and
  the `Workers` pool while its processes start).
* `_local`, `_workers/` and `_ray/`: the executors `InProcess`, `Workers` (worker
  processes: how they start, the fork server's preload, the pool) and `Ray` (what
  it ships, and how Ray zips it), each sub-room with its own catalogue.
* `_run`: `run_eval_suite`, which hands a plan to the executor (`Executor`: any
  object with an async ``run(plan)``).
* `_robustness`: the same suite without and with faults, compared (`robustness`).

Nothing is re-exported here: import from the module itself.
"""
