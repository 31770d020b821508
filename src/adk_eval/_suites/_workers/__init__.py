"""The `Workers` executor: one suite on worker processes of this machine.

The modules, from the bottom up (each imports only modules listed before it):

* `_process`: one worker process: how it starts (forked ahead, from the fork
  server, or spawned), the parent's handle on it and the worker's main.
* `_warm`: what the fork server imports once, so that each worker starts warm.
* `_pool`: this process and its workers on one queue (this process runs cases
  while the workers start).
* `_executor`: `Workers`, with the suite's pacer served to its workers.

Nothing is re-exported here: import from the module itself (the fork server
imports `_warm` by name, so this package imports nothing).
"""
