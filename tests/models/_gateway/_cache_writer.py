"""A worker process of the cache's concurrency test: it imports only the cache, so starts fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adk_eval.models._gateway._answers import ModelCall
from adk_eval.models._gateway._cache import open_cache
from adk_eval.models._gateway._settings import ModelCalls


def answer(text: str) -> list[dict[str, Any]]:
    """One model response saying `text`, as the gateway keeps it."""
    return [
        {
            "content": {"role": "model", "parts": [{"text": text}]},
            "usage_metadata": {"prompt_token_count": 100, "candidates_token_count": 20},
        }
    ]


def write_many(path: str, worker: int, start: Any, count: int) -> None:
    """Saves `count` answers of its own and one shared key, once `start` lets every worker go."""
    cache = open_cache(ModelCalls(cache_path=Path(path)))
    start.wait()
    for index in range(count):
        for key in (f"w{worker}-{index}", f"shared-{index}"):
            call = ModelCall("c", 0, "agent", "gemini-2.5-flash", None, {"i": index}, key, 1)
            cache.save(call, answer(f"{worker}:{index}"))
            assert cache.lookup(call) is not None


def open_at_once(path: str, start: Any, said: Any) -> None:
    """Opens the cache at `path` the moment every worker may, and says how it went."""
    start.wait()
    try:
        open_cache(ModelCalls(cache_path=Path(path)))
    except Exception as error:  # the test reads what went wrong
        said.put(f"{type(error).__name__}: {error}")
    else:
        said.put("opened")
