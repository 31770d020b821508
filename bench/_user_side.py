"""The user side of a real task dialogue as a simulated user's turns, and out-of-role variants.

A dialogue between people (`_task_dialogues`) read as adk_eval runs one: the user's
first message opens the case (``first_message``), and every later user message is a
turn of the simulated user, answering what the agent said before it (consecutive
messages of one side are one message). The last turn ends the conversation as a
simulated user does, with ``</finished>`` (after its own words, or alone when the agent
spoke last).

A variant replaces one turn with what a simulated user gets wrong:

* ``echo``: it repeats the agent's words;
* ``echo_then_answer``: it repeats the agent's words, then answers;
* ``quit_first``: it ends the conversation at its first turn;
* ``quit_midway``: it ends the conversation at a later turn, before the task is done;
* ``as_agent``: it says what the agent says next (it speaks as the agent);
* ``empty``: it says nothing.

The conversation ends where a variant quits.
"""

from __future__ import annotations

from dataclasses import replace

from _task_dialogues import Dialogue

from adk_eval.metrics._fidelity import UserTurn

__all__ = ["KINDS", "STOP", "user_side", "variant"]

STOP = "</finished>"
KINDS = ("echo", "echo_then_answer", "quit_first", "quit_midway", "as_agent", "empty")
QUIT = "Okay, thank you. Bye. " + STOP


def _merged(dialogue: Dialogue) -> list[tuple[bool, str]]:
    said: list[tuple[bool, str]] = []
    for turn in dialogue.turns:
        if said and said[-1][0] == turn.by_user:
            said[-1] = (turn.by_user, f"{said[-1][1]} {turn.text}")
        else:
            said.append((turn.by_user, turn.text))
    while said and not said[0][0]:  # the case opens with the user's first message
        said.pop(0)
    return said


def user_side(dialogue: Dialogue) -> list[UserTurn]:
    """The simulated user's turns (see the module doc)."""
    said = _merged(dialogue)
    turns: list[UserTurn] = []
    for index in range(2, len(said), 2):
        turns.append(UserTurn(len(turns) + 1, said[index - 1][1], said[index][1]))
    if len(said) % 2 == 0:  # the agent spoke last: the user ends
        turns.append(UserTurn(len(turns) + 1, said[-1][1], STOP))
    else:
        last = turns[-1] if turns else None
        if last is not None:
            turns[-1] = replace(last, reply=f"{last.reply} {STOP}")
    return turns


def variant(turns: list[UserTurn], kind: str, number: int) -> list[UserTurn]:
    """`turns` with turn `number` replaced as `kind` says (see the module doc)."""
    if kind == "quit_first":
        number = 1
    index = number - 1
    turn = turns[index]
    words = turn.reply.replace(STOP, "").strip()
    changed = {
        "echo": turn.prompt,
        "echo_then_answer": f"{turn.prompt} {words}".strip(),
        "quit_first": QUIT,
        "quit_midway": QUIT,
        "as_agent": turns[index + 1].prompt if index + 1 < len(turns) else "",
        "empty": "",
    }[kind]
    kept = [*turns[:index], replace(turn, reply=changed)]
    if kind.startswith("quit"):
        return kept
    return kept + turns[index + 1 :]
