"""Stored conversations read from outside: session stores, session JSON, traces, redaction.

Everything that reads what a running agent left behind lives here, low in the
layers: nothing here imports adk_eval above the error tree but the one loopback
rule the span collector asks, so every reader (scoring, shadow replay, mining,
the realism report) stands on it, and reads stored conversations only through
`_stored`.

The modules, from the bottom up (each imports only modules listed before it):

* `_files`: what a path a user names is; `Unreadable`, a session that cannot be read.
* `_filter`: `SessionFilter`, which stored sessions to read.
* `_open`: conversations still being written (`still_open`).
* `_redact/`: redaction (`Redactor`, `redact_session`, `RedactionCounts`).
* `_source`: what a source is (`SessionSource`: it reads each session with what
  it lacks), what every source shares, and sessions already at hand.
* `_rows`, `_database`: an ADK session store's database, read-only.
* `_json`: exported session JSON.
* `_spans/`: OpenTelemetry spans: decoding, the spans table, conversations
  rebuilt as sessions, and the OTLP collector that writes a spans file.
* `_traces`: spans read as stored sessions (`TraceSource`).
* `_specs`: `open_sessions`, a spec to its source.
* `_stored`: one stored conversation built complete (`StoredConversation`) and
  the one stream of them every reader reads, with its counts.

Nothing is re-exported here: import from the module itself.
"""
