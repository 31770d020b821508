"""Sandbox: what of a run reaches outside its mocks, shown and controlled.

The modules, from the bottom up (each imports only modules listed before it):

* `_inventory`: what runs for real (plugins, callbacks, toolsets, telemetry),
  read off a case before it runs (`RunsForReal`).

Nothing is re-exported here: import from the module itself.
"""
