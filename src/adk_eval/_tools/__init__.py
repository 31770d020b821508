"""Tools: every way a tool call of the agent under test is answered.

The modules, from the bottom up (each imports only modules listed before it):

* `_clock`: the case clock (`CaseClock`), which injected latency moves.
* `_context`: `MockToolContext`, what a mock knows about the call it answers.
* `_faults`: seeded faults and latency (`ToolMock.with_faults`) and call keys.
* `_simulated`: a model answering a tool from its declaration (`ToolSimulator`).
* `_recording`: a run's recorded answers replayed (`ToolMock.from_recording`).
* `_mocks`: `ToolMock`, every kind of answer in one object.
* `_remote`: remote (A2A) agents run for real only if declared (`remote_mocks`),
  else the run is refused before it starts.
* `_nodes`: workflow function nodes mocked, passed or refused (`node_mocks`).
* `_mtls`: MCP toolsets to a loopback URL spared ADK's client-certificate probe.
* `_policy`: which calls a case allows (`ToolPolicy`), from its mocks and the tree.
* `_bodies`: what runs instead of a tool's body (the copies handed to ADK).
* `_toolsets`: toolsets replaced as a whole (`ToolsetMock`): declared, never started;
  their filter and prefix kept.
* `_mcp`: an MCP tool's answer as ADK's `McpTool` gives it the model (a `CallToolResult`).
* `_rejections`: calls that do not fit their tool's declaration, and ADK's answer to them.
* `_notes`: what the interception notes about each call (answered by, raised, misfits).
* `_plugin`: `InterceptionPlugin`, the ADK plugin that applies the policy.

Nothing is re-exported here: import from the module itself.
"""
