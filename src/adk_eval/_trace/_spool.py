"""Traces kept on disk, not in memory: a suite's finished runs stay small.

A suite keeps every result it finished, and a run's trace (its events, states,
artifacts) is most of a result's memory: about 30 KiB for a one-turn
conversation, more for longer ones. `TraceSpool` writes each finished run's
trace to one temporary file per suite (unlinked at once, closed when the last
result that points into it is gone), and the result keeps a `SpooledTrace`:
where its trace is. Reading it back unpickles it; the few traces read last are
kept, as a report reads one run's trace several times in a row.

Pickle, because a trace must come back exactly (a tool's answer may hold NaN
or bytes, which the JSON data form cannot carry) and because nothing but this
process ever writes the file: it is created here, unlinked at once, and
reached only through the descriptor this process holds. Nothing read from a
user's store or file is ever unpickled.

A trace holds whatever the agent put in its state and its events (a workflow
node's output, a tool's state delta), and some of it cannot be pickled (a
generator, a lock, a lambda, a class defined in a function) or not read back.
Such a value comes back as its ``repr``, as in the JSON data form, and only
that value: the event or state around it, and everything else, comes back
exactly. Each trace is read back once as it is written, so a value that cannot
be rebuilt is found then, not when a report reads it.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._trace import EvalTrace

__all__ = ["SpooledTrace", "TraceSpool"]

_KEPT = 8
"""Traces read back that a spool keeps in memory (the last ones read)."""


class TraceSpool:
    """One temporary file of traces (see the module doc); safe to use from threads."""

    def __init__(self) -> None:
        descriptor, path = tempfile.mkstemp(prefix="adk_eval_traces_")
        os.unlink(path)  # the open descriptor is all that keeps it: gone when it is closed
        self._fd = descriptor
        weakref.finalize(self, os.close, descriptor)
        self._end = 0
        self._lock = threading.Lock()
        self._read: OrderedDict[int, EvalTrace] = OrderedDict()

    def put(self, trace: EvalTrace) -> SpooledTrace:
        """Writes `trace`; where it is."""
        fields = {f.name: getattr(trace, f.name) for f in dataclasses.fields(trace)}
        data = _pickled(fields)  # not its cached views
        with self._lock:
            offset = self._end
            os.pwrite(self._fd, data, offset)
            self._end += len(data)
        return SpooledTrace(self, offset, len(data), trace.case_name)

    def load(self, where: SpooledTrace) -> EvalTrace:
        """The trace written at `where`."""
        with self._lock:
            kept = self._read.get(where.offset)
            if kept is not None:
                self._read.move_to_end(where.offset)
                return kept
        data = os.pread(self._fd, where.length, where.offset)
        trace = EvalTrace(**pickle.loads(data))
        with self._lock:
            self._read[where.offset] = trace
            while len(self._read) > _KEPT:
                self._read.popitem(last=False)
        return trace


@dataclass(frozen=True)
class SpooledTrace:
    """Where a run's trace is in a `TraceSpool` (the spool stays open while this lives)."""

    spool: TraceSpool = field(repr=False, compare=False)
    offset: int
    length: int
    case_name: str | None = None

    def load(self) -> EvalTrace:
        """The trace, read back."""
        return self.spool.load(self)


def _pickled(value: object) -> bytes:
    """`value` pickled and checked to read back; what cannot be kept becomes its repr."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)
    except Exception:  # some value inside cannot be kept: keep all the others
        return _Keeping.dumps(value, within=set())
    return data


class _Keeping(pickle.Pickler):
    """Pickles `root`, each value inside it that cannot be kept as its repr.

    A value is kept whole when it pickles and reads back on its own; else it is
    pickled with its own contents kept the same way (a nested pickle, read back
    by `pickle.loads`), and if even that fails it is its repr. Plain containers
    (dicts, lists, tuples) are never whole values here: pickle walks them itself.
    """

    def __init__(self, file: io.BytesIO, root: object, within: set[int]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._root = root
        self._within = within
        """Ids of the values being kept piece by piece: a cycle back to one is its repr."""

    @classmethod
    def dumps(cls, root: object, *, within: set[int]) -> bytes:
        file = io.BytesIO()
        cls(file, root, within).dump(root)
        return file.getvalue()

    def reducer_override(self, obj: object) -> Any:
        if obj is self._root:
            return NotImplemented
        try:
            pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:
            return self._in_pieces(obj)
        return NotImplemented  # it is kept whole: pickled here as usual

    def _in_pieces(self, obj: object) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if id(obj) in self._within:
            return (str, (_repr(obj),))
        self._within.add(id(obj))
        try:
            data = _Keeping.dumps(obj, within=self._within)
            pickle.loads(data)
        except Exception:  # its own reduction fails (a generator, a lock)
            return (str, (_repr(obj),))
        finally:
            self._within.discard(id(obj))
        return (pickle.loads, (data,))


def _repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__qualname__} object>"
