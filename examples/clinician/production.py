"""A production session store for the clinician, written the way production writes it.

    python examples/clinician/production.py --out production/

runs the clinician agent (`root_agent`) for real through ADK's `Runner` on ADK's
`DatabaseSessionService` (``sqlite+aiosqlite:///OUT/sessions.db``), with scripted
patients playing its users: about 20 conversations, seeded, offline with the
example's scripted clinician when no key is set (see `models.py`). The policy
service `read` calls is a small HTTP server on this machine serving the policies
the evals mock.

The app works as a chat app around the agent would: the patient's first message
is a user message; a question the clinician asks with `ask` (a long-running tool)
is shown to the patient and their answer goes back as that call's function
response; when the clinician ends its turn with text, the patient may reply,
ask something, say goodbye or just leave.

The patients vary (seeded): some answer every question directly, some dodge
("not sure, does it matter?"), some refuse ("I'd rather not say"), some volunteer
their history in the first message, some give up part way ("never mind, forget
it"). Then mine the store and compare (the commands are printed at the end and in
the README).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: the repository's packages import
    sys.path.insert(0, str(ROOT))

from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import DatabaseSessionService  # noqa: E402
from google.genai import types  # noqa: E402

from examples.clinician import tools  # noqa: E402
from examples.clinician.agent import root_agent  # noqa: E402
from examples.clinician.evals import MOCK_POLICIES  # noqa: E402

APP_NAME = "clinician"
DEFAULT_CONVERSATIONS = 20
DEFAULT_SEED = 7

# -- the patients ---------------------------------------------------------------------

COMPLAINTS: dict[str, dict] = {
    "chest_pain": {
        "patient": {"age": 55, "gender": "male"},
        "openers": [
            "I have really bad chest pain",
            "chest pain, started a bit ago",
            "I've got chest pain that won't go away and I'm scared",
        ],
        "volunteering": (
            "I have crushing chest pain that started 30 minutes ago and goes down my left "
            "arm. I'm 55, I have high blood pressure and high cholesterol."
        ),
    },
    "headache": {
        "patient": {"age": 34, "gender": "female"},
        "openers": [
            "I've had a headache for two days",
            "headache again",
            "I've had this headache since Monday and paracetamol isn't really touching it",
        ],
        "volunteering": (
            "I've had a headache since Monday. It built up slowly, like a tight band. "
            "No fever, my vision is fine. I get tension headaches when work is stressful."
        ),
    },
    "routine": {
        "patient": {"age": 62, "gender": "male"},
        "openers": [
            "Hi, I'd like to book an appointment for a routine blood pressure check",
            "appointment for a BP check please",
        ],
        "volunteering": (
            "Hi, I need an appointment for my blood pressure check. Tuesday mornings suit "
            "me best, or Thursday after 2."
        ),
    },
    "other": {
        "patient": {"age": 68, "gender": "female"},
        "openers": [
            "My jaw has been aching for an hour and I feel sick and sweaty",
            "I've got a rash on my arm that's spreading",
        ],
        "volunteering": (
            "My jaw has ached for an hour, I feel sick and sweaty. I'm 68 and I have "
            "diabetes, Dr Patel looks after it."
        ),
    },
}

ANSWERS: list[tuple[tuple[str, ...], str]] = [
    (("days", "times"), "Tuesday mornings are best for me."),
    (("start",), "About 30 minutes ago. It's crushing, and it goes down my left arm."),
    (("heart problems",), "I've got high blood pressure and high cholesterol."),
    (("suddenly", "gradually"), "It built up slowly, a dull tight feeling like a band."),
    (("fever", "stiff neck"), "No fever, my neck is fine, and my vision is normal."),
]
"""A cooperative patient's answer to the clinician's question, by its keywords."""

DODGES = ["Not sure, does that matter?", "I don't know really. Can't you just tell me?"]
REFUSALS = ["I'd rather not say.", "I'd prefer not to answer that."]
GIVING_UP = ["Never mind, forget it.", "This is taking too long, forget it. I give up."]
AFTER_ADVICE = {
    "thanks": ["OK, thank you.", "Thanks, bye!", "Right, thanks for your help."],
    "question": ["Should I take an aspirin while I wait?", "How long will that take?"],
}


def answer_to(question: str) -> str:
    """What a cooperative patient answers to `question`."""
    lowered = question.lower()
    return next(
        (text for keys, text in ANSWERS if any(k in lowered for k in keys)),
        "I'm not sure.",
    )


@dataclass
class Patient:
    """One production user: their complaint and how they behave (drawn from a seeded RNG)."""

    number: int
    complaint: str
    opener: str
    cooperation: float  # the chance of answering a question directly
    refuses: bool  # when not answering directly: refuse rather than dodge
    gives_up_at: int | None  # gives up instead of answering this question (0 first)
    replies_after_advice: str  # "thanks", "question" or "leave"
    rng: random.Random = field(repr=False)
    questions: int = 0

    @classmethod
    def draw(cls, number: int, rng: random.Random) -> Patient:
        complaint = rng.choice(list(COMPLAINTS))
        facts = COMPLAINTS[complaint]
        volunteers = rng.random() < 0.25
        opener = facts["volunteering"] if volunteers else rng.choice(facts["openers"])
        cooperation = rng.choice([1.0, 1.0, 0.8, 0.5, 0.3])
        return cls(
            number=number,
            complaint=complaint,
            opener=opener,
            cooperation=cooperation,
            refuses=rng.random() < 0.4,
            gives_up_at=rng.choice([0, 1]) if rng.random() < 0.2 else None,
            replies_after_advice=rng.choice(["thanks", "thanks", "question", "leave"]),
            rng=rng,
        )

    def answer(self, question: str) -> tuple[str, bool]:
        """The answer to a question asked with `ask`, and whether the patient gives up."""
        index, self.questions = self.questions, self.questions + 1
        if self.gives_up_at == index:
            return self.rng.choice(GIVING_UP), True
        if self.rng.random() < self.cooperation:
            return answer_to(question), False
        return self.rng.choice(REFUSALS if self.refuses else DODGES), False

    def reply(self, said: str, replies: int) -> str | None:
        """The reply to the clinician's message (None: the patient leaves)."""
        if self.replies_after_advice == "leave" or replies >= 2:
            return None
        if self.replies_after_advice == "question" and replies == 0:
            return self.rng.choice(AFTER_ADVICE["question"])
        return self.rng.choice(AFTER_ADVICE["thanks"]) if replies == 0 else None


# -- the policy service ------------------------------------------------------------------


class _Policies(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        policy = self.path.rstrip("/").rsplit("/", 1)[-1]
        known = policy in MOCK_POLICIES
        body = json.dumps(MOCK_POLICIES[policy] if known else {"error": "no such policy"})
        self.send_response(200 if known else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


@contextmanager
def policy_service() -> Iterator[str]:
    """The policy service on this machine; `read` calls it while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Policies)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    before = tools.POLICY_SERVICE
    tools.POLICY_SERVICE = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield tools.POLICY_SERVICE
    finally:
        tools.POLICY_SERVICE = before
        server.shutdown()
        server.server_close()


# -- the app ---------------------------------------------------------------------------------


def _text(content: types.Content | None) -> str:
    return "".join(p.text or "" for p in (content.parts if content else None) or [] if p.text)


async def converse(runner: Runner, service: DatabaseSessionService, patient: Patient) -> str:
    """One conversation, stored by ADK as it happens; returns the session id."""
    user_id = f"patient-{patient.number:02d}"
    session = await service.create_session(
        app_name=APP_NAME,
        user_id=user_id,
        state={"patient": COMPLAINTS[patient.complaint]["patient"]},
    )
    message: types.Content | None = types.Content(
        role="user", parts=[types.Part(text=patient.opener)]
    )
    replies = 0
    for _ in range(12):  # a safety bound: every conversation ends well before
        if message is None:
            break
        asked: list[types.FunctionCall] = []
        said: list[str] = []
        async for event in runner.run_async(
            user_id=user_id, session_id=session.id, new_message=message
        ):
            said.append(_text(event.content))
            for call in event.get_function_calls():
                if call.name == "ask" and call.id in (event.long_running_tool_ids or set()):
                    asked.append(call)
        message = None
        if asked:  # the app shows the question; the answer is the call's response
            call = asked[-1]
            answer, gave_up = patient.answer(str((call.args or {}).get("question", "")))
            if gave_up:  # typed instead of answering, then closed the app
                message = types.Content(role="user", parts=[types.Part(text=answer)])
                async for _event in runner.run_async(
                    user_id=user_id, session_id=session.id, new_message=message
                ):
                    pass
                break
            response = types.FunctionResponse(id=call.id, name="ask", response={"result": answer})
            message = types.Content(role="user", parts=[types.Part(function_response=response)])
        elif "".join(said).strip():
            reply = patient.reply("".join(said), replies)
            replies += 1
            if reply is not None:
                message = types.Content(role="user", parts=[types.Part(text=reply)])
    return session.id


async def record(store: Path, conversations: int, seed: int) -> None:
    """Writes `conversations` conversations into the new SQLite file `store`."""
    service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{store}")
    runner = Runner(agent=root_agent, app_name=APP_NAME, session_service=service)
    rng = random.Random(seed)
    try:
        with policy_service():
            for number in range(conversations):
                await converse(runner, service, Patient.draw(number, rng))
    finally:
        await runner.close()
        await service.close()


def main(argv: list[str] | None = None) -> Path:
    """The command line: writes the store and prints where it is and what to run next."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder for sessions.db")
    parser.add_argument("--conversations", type=int, default=DEFAULT_CONVERSATIONS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    store = args.out / "sessions.db"
    store.unlink(missing_ok=True)  # a fresh store each time
    asyncio.run(record(store, args.conversations, args.seed))
    mined = args.out / "mined"
    print(f"wrote {args.conversations} conversation(s) to sqlite:///{store}")
    print("next:")
    print(f"  adk-eval mine sqlite:///{store} --out {mined} --include-open")
    print(
        f"  CLINICIAN_MINED={mined} adk-eval run examples/clinician/mined_cases.py "
        f"--json {args.out / 'simulated.json'}"
    )
    print(f"  adk-eval realism sqlite:///{store} {args.out / 'simulated.json'} --include-open")
    return store


if __name__ == "__main__":
    main()
