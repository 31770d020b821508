"""`UserContract`: checked live at each user turn, a breaking turn redrawn once, then blamed."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools import ToolContext

from adk_eval import (
    STOP,
    CaseSession,
    EvalCase,
    EvalSetupError,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    UserContract,
    run_eval,
)
from adk_eval.metrics import score_session, user_fidelity
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call
from tests.order_support import RAN, build

GOAL = "Please book a table for two at Luigi's tonight"


def book_table(party: int, tool_context: ToolContext) -> dict:
    """Books a table (safe: state only)."""
    tool_context.state["booking"] = {"party": party}
    return {"booked": True}


def booker(*after: str) -> LlmAgent:
    """Books at once, says so, then says each of `after` in turn."""
    steps = [tool_call("book_table", {"party": 2}), "Booked: a table for two tonight.", *after]
    return LlmAgent(name="host", model=ScriptedLlm(steps), tools=[book_table])


def dining(user, contract: UserContract, agent: LlmAgent | None = None, **kwargs) -> EvalCase:
    return EvalCase(
        name="dinner",
        agent=agent or booker("You're welcome.", "Goodbye."),
        first_message=GOAL,
        tool_mocks={"book_table": book_table},
        user_agents=UserAgents(loop=user),
        metrics=[contract],
        **kwargs,
    )


def diner(*script) -> ScriptedUserAgent:
    return ScriptedUserAgent(name="diner", script=list(script))


# -- restart_solved ---------------------------------------------------------------


async def test_a_scripted_user_that_restarts_a_solved_task_is_stopped_and_blamed():
    contract = UserContract(solved_when="book_table")
    result = await run_eval(
        dining(diner("Can you book a table for two at Luigi's tonight?"), contract)
    )
    assert result.status == "error"
    assert result.error is not None
    assert result.error.phase == "user_agent"
    assert "`restart_solved` at turn 1" in result.error.message
    assert "Can you book a table for two at Luigi's tonight?" in result.error.message
    assert result.attribution is not None
    assert result.attribution.party == "simulated_user"
    verdict = result.metrics["user_contract"]
    assert not verdict.applicable
    assert any("restart_solved" in line for line in verdict.evidence)


async def test_asking_to_start_over_once_solved_breaks_it_and_the_goal_before_does_not():
    solved = UserContract(solved_when={"session.booking": {"$exists": True}})
    again = await run_eval(dining(diner("Great, now do it again"), solved))
    assert again.status == "error"
    assert "restart_solved" in again.error.message
    user = diner("Book a table for two at Luigi's tonight?", STOP)
    unsolved = UserContract(solved_when={"session.booking.party": 9})
    assert (await run_eval(dining(user, unsolved))).status == "passed"


async def test_an_llm_user_whose_redraw_complies_lets_the_run_go_on():
    requests: list[LlmRequest] = []

    def respond(request: LlmRequest) -> str:
        requests.append(request)
        steps = ["Now book a table for two at Luigi's tonight", "Thanks, bye </finished>"]
        return steps[model_turn_index(request)]

    user = LlmAgent(name="diner", model=ScriptedLlm(responder=respond))
    contract = UserContract(ends_with="bye", solved_when="book_table")
    result = await run_eval(dining(user, contract))
    assert result.status == "passed", result.explain()
    verdict = result.metrics["user_contract"]
    assert verdict.passed
    assert verdict.value["redrawn"][0]["rule"] == "restart_solved"
    assert "its redraw kept the contract" in verdict.evidence[1]
    note = requests[1].contents[-1].parts[0].text
    assert note.startswith("[Note from the evaluation: your last answer broke the rule")
    drawn = [e for e in result.trace.user_agent_events if e.author == "diner"]
    assert len(drawn) == 2  # both draws stay in the user agents' session


# -- end_before_answer --------------------------------------------------------------


async def test_closing_while_the_agent_waits_on_an_answer_breaks_it():
    asker = LlmAgent(name="host", model=ScriptedLlm(["How many people?"]), tools=[book_table])
    result = await run_eval(dining(diner(STOP), UserContract(), agent=asker))
    assert result.status == "error"
    assert "`end_before_answer`" in result.error.message
    assert result.attribution is not None
    assert result.attribution.party == "simulated_user"


async def test_closing_in_words_answers_the_question_and_solved_makes_any_close_fine():
    polite = diner("No, that's all, thanks </finished>")
    assert (await run_eval(dining(polite, UserContract()))).status == "passed"
    solved = UserContract(solved_when="book_table")
    steps = [tool_call("book_table", {"party": 2}), "Booked. Anything else?"]
    host = LlmAgent(name="host", model=ScriptedLlm(steps), tools=[book_table])
    assert (await run_eval(dining(diner(STOP), solved, agent=host))).status == "passed"


async def test_opening_with_the_stop_signal_breaks_it():
    case = EvalCase(
        name="opening",
        agent=booker(),
        tool_mocks={"book_table": book_table},
        user_agents=UserAgents(loop=diner(STOP)),
        metrics=[UserContract()],
    )
    result = await run_eval(case)
    assert result.status == "error"
    assert "before the agent said anything" in result.error.message


# -- reveal_early -------------------------------------------------------------------


def clinic(question: str, reply: str, contract: UserContract, *metrics) -> EvalCase:
    agent = LlmAgent(name="nurse", model=ScriptedLlm([question, "Thank you, noted."]))
    return EvalCase(
        name="intake",
        agent=agent,
        first_message="I have chest pain",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="patient", script=[reply, STOP])),
        metrics=[contract, *metrics],
    )


async def test_revealing_a_held_back_fact_before_it_was_asked_breaks_it():
    contract = UserContract(hold_back={"high blood pressure": ["condition", "medication"]})
    early = await run_eval(
        clinic("When did it start?", "An hour ago. My blood pressure is high.", contract)
    )
    assert early.status == "error"
    assert "`reveal_early`" in early.error.message
    assert "'high blood pressure'" in early.error.message
    asked = clinic("Any conditions or medication?", "I have high blood pressure", contract)
    assert (await run_eval(asked)).status == "passed"


async def test_held_back_facts_default_to_those_of_user_fidelity_with_their_own_words_as_cues():
    fidelity = user_fidelity(hold_back=["high blood pressure"], judge=False)
    early = clinic("When did it start?", "I have high blood pressure", UserContract(), fidelity)
    assert "reveal_early" in (await run_eval(early)).error.message
    asked = clinic(
        "Any blood pressure problems?", "Yes, high blood pressure", UserContract(), fidelity
    )
    assert (await run_eval(asked)).status == "passed"


# -- the end ------------------------------------------------------------------------


async def test_the_closing_phrase_and_the_end_state_are_checked_at_the_close():
    bye = UserContract(ends_with=("bye", "see you"), end_state={"session.booking.party": 2})
    kept = await run_eval(dining(diner("Thanks, bye </finished>"), bye))
    assert kept.status == "passed"
    assert kept.metrics["user_contract"].passed
    bare = await run_eval(dining(diner(STOP), bye))
    assert bare.status == "error"
    assert "`ends_with`" in bare.error.message
    unbooked = UserContract(end_state={"session.booking.party": 4})
    early = await run_eval(dining(diner("Thanks </finished>"), unbooked))
    assert "`end_state`" in early.error.message


async def test_a_user_that_never_closes_breaks_the_end_and_a_limit_leaves_it_unchecked():
    contract = UserContract(agent="patient", ends_with="bye")
    patient = ScriptedUserAgent(name="patient", script=["Fine, thanks"])
    root = ScriptedLlm([tool_call("ask_customer", {"question": "How are you?"}), "All done."])
    case = EvalCase(
        name="never_closed",
        agent=build(root),
        first_message="Hello",
        user_agents=UserAgents(tools={"ask_customer": patient}),
        metrics=[contract],
    )
    result = await run_eval(case)
    assert result.status == "failed"
    assert result.metrics["user_contract"].evidence[0].startswith("`patient` never closed")
    assert result.attribution is not None
    assert result.attribution.party == "simulated_user"
    chatty = dining(diner("ok", "ok", "ok"), UserContract(ends_with="bye"))
    chatty.terminate_when = TerminateWhen(max_turns=1)
    cut = await run_eval(chatty)
    assert cut.status == "terminated"
    assert not cut.metrics["user_contract"].applicable


# -- a real agent shape ---------------------------------------------------------------


async def test_a_support_agent_with_a_long_running_question_and_a_sub_agent():
    RAN.clear()
    root = ScriptedLlm(
        [
            tool_call("ask_customer", {"question": "Which order, and what is wrong with it?"}),
            tool_call("transfer_to_agent", {"agent_name": "billing"}),
        ]
    )
    billing = ScriptedLlm([tool_call("issue_invoice", {"order_id": "A1"}), "Your invoice is sent."])
    customer = ScriptedUserAgent(
        name="customer", script=["Order A1, the invoice is wrong", "Thanks, bye </finished>"]
    )
    contract = UserContract(
        agent=customer,
        ends_with="bye",
        solved_when="issue_invoice",
        hold_back={"order A1": ["which order"]},
    )
    case = EvalCase(
        name="support",
        agent=build(root, billing_model=billing),
        first_message="My invoice is wrong",
        tool_mocks={"issue_invoice": ToolMock.returning({"invoice": "INV-A1"})},
        user_agents=UserAgents(loop=customer, tools={"ask_customer": customer}),
        metrics=[contract],
    )
    result = await run_eval(case)
    assert result.status == "passed", result.explain()
    assert result.metrics["user_contract"].evidence == ["`customer` closed as the contract says"]
    assert RAN == []


# -- set-up and the rules' edges --------------------------------------------------------


def test_a_contract_refuses_unknown_rules_and_bad_settings():
    with pytest.raises(EvalSetupError, match="never=\\('restart_solved',\\)"):
        UserContract(never="restart_solved")  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match="`end_state`"):
        UserContract(end_state={"session.x": {"$bogus": 1}})
    with pytest.raises(EvalSetupError, match="hold_back=\\['blood'\\]"):
        UserContract(hold_back="blood")
    with pytest.raises(EvalSetupError, match=r"got unknown rule\(s\) 'restart'$"):
        UserContract(never=("restart",))  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match="`ends_with` must be a phrase or a list"):
        UserContract(ends_with=5)  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match="`solved_when` must be a state query, a tool's name"):
        UserContract(solved_when=123)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="positional"):  # "bye" would have named the contract
        UserContract("bye")  # type: ignore[misc]


async def test_a_contract_for_a_user_agent_the_case_lacks_is_a_setup_error():
    with pytest.raises(EvalSetupError, match="user agent `nobody`, which the case does not have"):
        await run_eval(dining(diner(STOP), UserContract(agent="nobody")))


async def test_on_a_stored_session_a_contract_is_not_applicable():
    from google.adk.sessions import Session

    session = Session(id="s", app_name="a", user_id="u")
    result = (await score_session(session, [UserContract()]))["user_contract"]
    assert not result.applicable
    assert "checked as a simulated run happens" in result.evidence[0]


# -- tool-answering user agents and several sessions ------------------------------------


async def test_a_tools_user_agent_is_bound_only_when_the_contract_names_it():
    root = ScriptedLlm([tool_call("ask_customer", {"question": "What is wrong?"}), "Fixed."])
    answerer = ScriptedUserAgent(name="answerer", script=["Order A1 has a wrong invoice"])
    held = {"order A1": ["which order"]}

    def case(contract: UserContract, loop=None) -> EvalCase:
        users = UserAgents(loop=loop, tools={"ask_customer": answerer})
        return EvalCase(
            name="tools",
            agent=build(root),
            first_message="My invoice is wrong",
            user_agents=users,
            metrics=[contract],
        )

    named = await run_eval(case(UserContract(agent="answerer", hold_back=held)))
    assert named.status == "error"
    assert "User agent `answerer` broke `reveal_early` at turn 1," in named.error.message
    unnamed = await run_eval(case(UserContract(hold_back=held), loop=diner(STOP)))
    assert unnamed.status == "passed", unnamed.explain()  # the loop user agent is bound
    with pytest.raises(EvalSetupError, match="binds the loop user agent, which the case"):
        await run_eval(case(UserContract(hold_back=held)))


def by_opening(scripts: dict[str, list]) -> ScriptedLlm:
    """A model that plays the script whose key is in the session's opening message."""

    def respond(request: LlmRequest):
        opening = next(c for c in request.contents if c.role == "user").parts[0].text
        steps = next(steps for key, steps in scripts.items() if key in opening)
        return steps[model_turn_index(request)]

    return ScriptedLlm(responder=respond)


BOOKS = [tool_call("book_table", {"party": 2}), "Booked. Anything else?", "Goodbye."]


def two_visits(first_user, second_user, **kwargs) -> EvalCase:
    host = LlmAgent(name="host", model=by_opening({"Luigi": BOOKS}), tools=[book_table])
    first, second = kwargs.pop("first", {}), kwargs.pop("second", {})
    return EvalCase(
        name="visits",
        agent=host,
        tool_mocks={"book_table": book_table},
        sessions=[
            CaseSession(GOAL, user_agents=UserAgents(loop=first_user), **first),
            CaseSession(GOAL, user_agents=UserAgents(loop=second_user), **second),
        ],
        **kwargs,
    )


async def test_a_contract_in_a_sessions_metrics_is_checked_live_in_that_session_only():
    contract = UserContract(ends_with="bye", solved_when="book_table")
    again = diner("Now book a table for two at Luigi's tonight", STOP)
    result = await run_eval(
        two_visits(diner("Thanks, bye </finished>"), again, second={"metrics": [contract]})
    )
    assert result.status == "error"
    assert "broke `restart_solved` at turn 1 of session `session_2`" in result.error.message
    assert result.attribution is not None
    assert result.attribution.party == "simulated_user"
    assert not result.metrics["session_2/user_contract"].applicable
    kept = await run_eval(
        two_visits(diner("Thanks, bye </finished>"), again, first={"metrics": [contract]})
    )
    assert kept.status == "passed", kept.explain()  # the second session is not bound
    assert kept.metrics["session_1/user_contract"].evidence == [
        "`diner` closed as the contract says"
    ]


async def test_a_case_contract_is_checked_afresh_in_each_session_turns_solved_and_end():
    contract = UserContract(ends_with="bye", solved_when="book_table")
    bye = diner("Thanks, bye </finished>")
    kept = await run_eval(two_visits(bye, bye, metrics=[contract]))
    assert kept.status == "passed", kept.explain()
    assert kept.metrics["user_contract"].value["sessions"] == {
        "session_1": {"closed": True, "redrawn": []},
        "session_2": {"closed": True, "redrawn": []},
    }
    again = diner("Now book a table for two at Luigi's tonight", STOP)
    broken = await run_eval(two_visits(bye, again, metrics=[contract]))
    assert "broke `restart_solved` at turn 1 of session `session_2`" in broken.error.message
    asker = ScriptedUserAgent(name="patient", script=["Fine, thanks"])
    closer = ScriptedUserAgent(name="patient", script=["Fine, bye </finished>"])
    root = ScriptedLlm([tool_call("ask_customer", {"question": "How are you?"}), "All done."])
    case = EvalCase(
        name="checkups",
        agent=build(root),
        sessions=[
            CaseSession("Hello", user_agents=UserAgents(tools={"ask_customer": asker})),
            CaseSession("Hello", user_agents=UserAgents(tools={"ask_customer": closer})),
        ],
        metrics=[UserContract(agent="patient", ends_with="bye")],
    )
    unclosed = await run_eval(case)
    assert unclosed.status == "failed"
    assert (
        unclosed.metrics["user_contract"]
        .evidence[0]
        .startswith("session_1: `patient` never closed")
    )
    assert "session_2: `patient` closed as the contract says" in (
        unclosed.metrics["user_contract"].evidence
    )


async def test_a_session_contract_binds_a_user_agent_of_its_own_session():
    guest = ScriptedUserAgent(name="guest", script=[STOP])
    wrong = two_visits(diner(STOP), guest, second={"metrics": [UserContract(agent="diner")]})
    with pytest.raises(EvalSetupError, match="which session `session_2` does not have"):
        await run_eval(wrong)
    differ = two_visits(diner(STOP), guest, metrics=[UserContract()])
    with pytest.raises(EvalSetupError, match="the loop user agent, and the sessions' differ"):
        await run_eval(differ)
