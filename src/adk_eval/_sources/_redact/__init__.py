"""Redaction of stored conversations: personal data replaced by typed, numbered markers.

The modules, from the bottom up (each imports only modules listed before it):

* `_patterns`: the built-in detectors (e-mails, phone, card and id numbers) and
  what each accepts.
* `_hidden`: text hidden in an encoding (base64 strings, ``text/*`` blobs),
  decoded to be redacted and encoded again.
* `_parts`: the walk over an event's parts, where a reader could read text.
* `_redactor`: `Redactor`, the marker table, `RedactionCounts` and
  `redact_session`, which only the stream of stored conversations calls.

Nothing is re-exported here: import from the module itself.
"""
