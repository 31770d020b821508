"""Names found by a named-entity model, where one is installed: the ``redact`` extra.

The cue rules (`_cued`) find a name someone introduces ("my name is", "Ms.",
"my wife"); a name nobody introduces ("Ana will bring the forms") needs a
model. Microsoft Presidio's analyzer runs one: ``pip install
"adk-eval[redact]"`` brings Presidio and spaCy, and a spaCy pipeline with a
named-entity recognizer (``en_core_web_lg``, ``en_core_web_sm``, or your own) is
installed by you, from its wheel: adk-eval never downloads a model, and neither
does Presidio here (its own engine downloads a missing model at start-up; the
engine built here is only given a pipeline that is installed, or refuses).

`names_model` turns the `Redactor`'s ``ner`` setting into a function
``(text) -> [(start, end), ...]`` of the PERSON entities found, or None:

* ``"auto"`` (the default): the first English spaCy pipeline installed (by
  name; another language's when there is no English one), when Presidio is
  installed too; else None: the cue rules alone, and nothing is imported.
* a pipeline's package name or folder: that pipeline; one line saying what to
  install when Presidio or the pipeline is missing.
* a Presidio ``AnalyzerEngine`` you built (another model, another engine): its
  PERSON entities.
* None: no model.

Presidio and spaCy take about 1.2 s to import and a pipeline as long again to
load: both happen once per process, when the first text is redacted, never at
import. Presidio's anonymizer is not used: the markers (one per value, the same
in every message, tool call and key of a conversation) are the `MarkerTable`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata, util
from pathlib import Path
from typing import Any

from ..._errors import EvalSetupError

__all__ = ["NamesModel", "installed_pipelines", "names_model"]

NamesModel = Callable[[str], list[tuple[int, int]]]
"""Where a model finds people's names in a text: ``(text) -> [(start, end), ...]``."""

_EXTRA = 'pip install "adk-eval[redact]"'


@functools.cache
def installed_pipelines() -> tuple[str, ...]:
    """The spaCy pipelines installed as packages (read once from their entry points, no import)."""
    names = {entry.name for entry in metadata.entry_points(group="spacy_models")}
    return tuple(sorted(names, key=lambda name: (not name.startswith("en_"), name)))


def names_model(setting: object) -> NamesModel | None:
    """The names model the ``ner`` setting asks for (see the module docstring)."""
    if setting is None:
        return None
    if setting == "auto":
        pipelines = installed_pipelines()
        if not pipelines or util.find_spec("presidio_analyzer") is None:
            return None
        return _people(functools.partial(_analyzer, pipelines[0]))
    if isinstance(setting, str):
        if util.find_spec("presidio_analyzer") is None:
            raise EvalSetupError(
                f"Redactor(ner={setting!r}) needs Microsoft Presidio and spaCy: {_EXTRA}"
            )
        if not Path(setting).is_dir() and setting not in installed_pipelines():
            raise EvalSetupError(
                f"Redactor(ner={setting!r}): no spaCy pipeline of that name is installed "
                f"(installed: {list(installed_pipelines()) or 'none'}); install its wheel with "
                "pip, or give a pipeline's folder: adk-eval never downloads a model"
            )
        return _people(functools.partial(_analyzer, setting))
    if callable(getattr(setting, "analyze", None)):
        return _people(lambda: setting)
    raise EvalSetupError(
        f"Redactor(ner={setting!r}): give 'auto', None, a spaCy pipeline's name or folder, "
        "or a Presidio AnalyzerEngine"
    )


@functools.lru_cache(maxsize=4)
def _analyzer(pipeline: str) -> Any:
    """Presidio's analyzer over one installed spaCy pipeline, finding people only."""
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": pipeline}])
    registry = RecognizerRegistry(supported_languages=["en"])
    registry.add_recognizer(SpacyRecognizer(supported_language="en", supported_entities=["PERSON"]))
    return AnalyzerEngine(nlp_engine=engine, registry=registry, supported_languages=["en"])


def _people(analyzer: Callable[[], Any]) -> NamesModel:
    """The PERSON spans of the analyzer `analyzer()` returns (built at the first text)."""

    def find(text: str) -> list[tuple[int, int]]:
        results = analyzer().analyze(text=text, language="en", entities=["PERSON"])
        return sorted((result.start, result.end) for result in results)

    return find
