"""Pacing: when a model call may go, so that a suite stays within its providers' quotas.

The lowest room of `models`: it knows quotas and providers' refusals, not runs.

* `_limits`: `RateLimit` (``N/WINDOW``), limits by model name or glob, and where
  they are said (code, the command line, ``pyproject.toml``).
* `_failures`: what a failed call says about its provider (`Failure`: a rate
  limit, a quota spent, a server error, or the call's own error).
* `_pacer`: `Pacer`, what the gateway asks (a protocol), and `LocalPacer`,
  which paces in one process.
* `_wire`: what a shared pacer and its clients share (`Ledger`, `RemotePacer`).
* `_shared`: one pacer for a suite's worker processes, over a Unix socket.
* `_ray`: one pacer for a suite's Ray tasks, in an actor.
"""
