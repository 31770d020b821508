"""`claimed_actions`: an agent claims an action no successful tool call of the run made.

The room, bottom-up (each module imports only those above it here):

* `_verbs`: action verbs, their past forms, synonym groups, and the verbs each
  tool performs (from its name and description);
* `_text`: the English rules of what a claim looks like in an agent's message;
* `_calls`: what backs a claim (the calls made before it, or with it, that did
  not fail) and what a failed call is;
* `_judge`: the optional model that matches claimed verbs to the tools the
  tables do not, and reads the messages the rules found no claim in;
* `_metric`: `ClaimedActions`, the invariant itself, live or post hoc.
"""

from __future__ import annotations

from ._metric import ClaimedActions, claimed_actions

__all__ = ["ClaimedActions", "claimed_actions"]
