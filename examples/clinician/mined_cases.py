"""The clinician's mined cases: production conversations played again by a simulated patient.

The folder comes from ``CLINICIAN_MINED`` (default ``production/mined``, from the
working directory), written by::

    python examples/clinician/production.py --out production
    adk-eval mine sqlite:///production/sessions.db --out production/mined

Each mined scenario is a case (`load_mined`): the real patient's first message
opens it, a simulated patient plays the rest (it also answers the clinician's `ask`
questions), the policy service is mocked as in `evals.py`, and the judge checks
that the clinician told the patient where to go. Offline, the simulated patient is
a scripted stand-in answering by keyword (see `models.py`).

It is not an ``*_eval.py`` file, so ``adk-eval run examples/clinician`` leaves it out;
run it by name once the folder exists (before, it stops with one line saying how to
mine it)::

    CLINICIAN_MINED=production/mined adk-eval run examples/clinician/mined_cases.py
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from adk_eval import EvalCase, UserAgents
from adk_eval.realism import load_mined

from . import evals
from .agent import root_agent
from .models import PatientRule, patient_model

MINED = Path(os.environ.get("CLINICIAN_MINED", "production/mined"))

SIMULATED_PATIENT_RULES: list[PatientRule] = [
    (["days", "times"], ["Tuesday mornings are best for me."]),
    (["start"], ["About 30 minutes ago. It's crushing, and it goes down my left arm."]),
    (["heart problems"], ["I've got high blood pressure and high cholesterol."]),
    (["suddenly", "gradually"], ["It built up slowly, a dull tight feeling like a band."]),
    (["paracetamol"], ["OK, thank you. I'll rest and see how it goes."]),
    (["welcome", "take care"], ["Thanks, bye! </finished>"]),
    (["fever", "stiff neck"], ["No fever, my neck is fine, and my vision is normal."]),
    (["999"], ["OK, I'm calling 999 now. </finished>"]),
    (["confirm", "text"], ["Great, thanks! </finished>"]),
    (["clinician", "shortly"], ["OK, I'll wait. </finished>"]),
]
"""The offline simulated patient: a cooperative answer to each of the clinician's messages."""


def mined_cases(folder: Path) -> list[EvalCase]:
    """The mined scenarios of `folder` as clinician cases."""
    cases = load_mined(
        folder,
        root_agent,
        user_model=patient_model(SIMULATED_PATIENT_RULES, "Thanks. </finished>"),
        tool_mocks=evals.TOOL_MOCKS,
        metrics=[
            evals.told_the_patient(
                "told_the_pathway", "Did the clinician tell the patient where to go next?"
            )
        ],
    )
    return [
        dataclasses.replace(
            case,
            # the simulated patient also answers the questions the clinician asks with `ask`
            user_agents=UserAgents(
                loop=case.user_agents.loop, tools={"ask": case.user_agents.loop}
            ),
            bridge=evals.BRIDGE,
        )
        for case in cases
    ]


MINED_CASES = mined_cases(MINED)
