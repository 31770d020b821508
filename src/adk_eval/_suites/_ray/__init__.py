"""The `Ray` executor: one suite on a Ray cluster, and what it ships there.

The modules, from the bottom up (each imports only modules listed before it):

* `_traversal`: how Ray zips a folder it ships (Ray's own traversal, or a close copy).
* `_shipping`: what `Ray` ships (the project's modules the suite loaded, never its
  secrets or databases), the preview of it, and the ``runtime_env`` built from it.
* `_executor`: `Ray`, which sends the suite's runs out as Ray tasks.

Nothing is re-exported here: import from the module itself.
"""
