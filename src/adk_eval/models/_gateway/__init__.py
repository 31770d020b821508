"""The gateway: every model call of a run, whatever its role, through one gate.

* `_settings`: `ModelCalls`, how a suite's calls are paced, retried, cached and
  recorded (passed down from the suite to each run, never looked up).
* `_gate`: `Gateway` (a suite's settings and pacer in one process) and
  `RunGate` (one run's: its cassette, its counts, its waiting).
* `_stats`: `ProviderStats`, what the calls met, and the `Tally` a gate keeps.
* `_plugin`: `GatewayPlugin`, where an agent's calls enter the gateway.
* `_pipeline`: the call itself: cassette, cache, then the provider.
* `_provider`: the provider's answer, paced and retried by the gateway alone.
* `_ask`: one answer from a model, as the judges and simulated tools ask.
* `_requests`: a request as data (what the cache keys on, what a cassette
  compares).
* `_answers`, `_cache`, `_cache_file`, `_cassette`: answers kept.
* `_usage`: tokens and money of each role's calls.
"""
