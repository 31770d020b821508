"""Redaction of stored conversations: personal data replaced by typed, numbered markers.

The modules, from the bottom up (each imports only modules listed before it):

* `_patterns`: values found by their shape: e-mails, phone, card and id numbers
  (Google's libphonenumber, with the ``redact`` extra, for unbroken phone numbers).
* `_places`: street addresses and spoken e-mail addresses.
* `_cued`: values known by what is said around them: names, dates of birth,
  account and order ids (a cue in the text, the message before, or a key).
* `_kinds`: the built-in kinds, their detectors in the order they win an
  overlap, and what counts call them.
* `_counts`: `MarkerTable` (one conversation's markers) and `RedactionCounts`.
* `_ner`: names found by a named-entity model through Microsoft Presidio, where
  one is installed (optional, loaded once per process at first use).
* `_split`: values split over two messages.
* `_hidden`: text hidden in an encoding (base64 strings, ``text/*`` blobs),
  decoded to be redacted and encoded again.
* `_parts`: the walk over an event's parts, where a reader could read text.
* `_redactor`: `Redactor`, `redact_text` and `redact_session`, which only the
  stream of stored conversations calls.

Nothing is re-exported here: import from the module itself.
"""
