"""Which model plays each role: names resolved, keys checked, the models ADK makes for a case.

* `_roles`: the roles (the system agent, the user agents, the judge), where
  each is configured, names resolved through ADK's registry, keys checked.
* `_local`: ``"local"``, SmolLM2 on an embedded llama.cpp server.
* `_vertex`: Vertex AI credentials and project, checked without network.
* `_clients`: the model client libraries, imported with the eval files.
* `_consult`: the advisor model of ADK's ``ModelConsultTool``.
* `_summarizer`: the summarizer of ADK's event compaction, on a case's model.
"""
