"""The optional libraries: a names model through Presidio, libphonenumber, and life without them."""

from __future__ import annotations

import sys
from importlib import util

import pytest

from adk_eval._errors import EvalSetupError
from adk_eval._sources._redact import _patterns
from adk_eval._sources._redact._counts import MarkerTable
from adk_eval._sources._redact._ner import installed_pipelines
from adk_eval._sources._redact._redactor import Redactor, redact_text

HAS_PRESIDIO = util.find_spec("presidio_analyzer") is not None and util.find_spec("spacy")
NEEDS_PRESIDIO = pytest.mark.skipif(
    not HAS_PRESIDIO, reason='needs the redact extra: pip install "adk-eval[redact]"'
)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """A tiny spaCy pipeline of our own whose entity ruler knows two people (no model download)."""
    import spacy

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(
        [
            {"label": "PERSON", "pattern": "Ana"},
            {"label": "PERSON", "pattern": [{"LOWER": "tomas"}, {"LOWER": "ferreira"}]},
        ]
    )
    folder = tmp_path_factory.mktemp("pipeline") / "people"
    nlp.to_disk(folder)
    return str(folder)


@NEEDS_PRESIDIO
def test_a_names_model_finds_a_name_nobody_introduces(pipeline):
    redactor = Redactor(ner=pipeline)
    table = MarkerTable()
    text = "Ana will bring the forms; Tomas Ferreira signs them. Ana again."
    assert redact_text(text, redactor, table) == (
        "<NAME_1> will bring the forms; <NAME_2> signs them. <NAME_1> again."
    )
    # without the model, the cue rules alone leave names nobody introduces
    assert redact_text(text, Redactor(ner=None), MarkerTable()) == text


@NEEDS_PRESIDIO
def test_a_names_model_that_is_not_installed_is_one_line():
    with pytest.raises(EvalSetupError, match="no spaCy pipeline of that name is installed"):
        Redactor(ner="xx_no_such_pipeline")


def test_auto_uses_no_model_when_none_is_installed():
    redactor = Redactor()
    if installed_pipelines() and HAS_PRESIDIO:
        pytest.skip(f"a spaCy pipeline is installed here: {installed_pipelines()}")
    assert redactor._names is None
    assert redact_text("Ana will bring the forms", redactor, MarkerTable()) == (
        "Ana will bring the forms"
    )


def test_without_libphonenumber_unbroken_numbers_are_left(monkeypatch):
    monkeypatch.setitem(sys.modules, "phonenumbers", None)  # import phonenumbers fails
    _patterns.phonenumbers_module.cache_clear()
    try:
        assert redact_text("4155552671 or (415) 555-2671", Redactor(), MarkerTable()) == (
            "4155552671 or <PHONE_1>"
        )
    finally:
        _patterns.phonenumbers_module.cache_clear()


@pytest.mark.skipif(
    _patterns.phonenumbers_module() is None,
    reason='needs the redact extra: pip install "adk-eval[redact]"',
)
def test_with_libphonenumber_unbroken_numbers_are_found_and_ids_kept():
    table = MarkerTable()
    text = "call 4155552671 or 07700900461; order 1234567890 and 0000123456"
    assert redact_text(text, Redactor(kinds=("phone",)), table) == (
        "call <PHONE_1> or <PHONE_2>; order 1234567890 and 0000123456"
    )
