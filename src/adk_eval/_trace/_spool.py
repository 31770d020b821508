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
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import tempfile
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

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
        data = pickle.dumps(fields, protocol=pickle.HIGHEST_PROTOCOL)  # not its cached views
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
