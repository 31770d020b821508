"""Sessions exported as JSON: `JsonSource`, a file of one `Session` or a list, or a folder.

A folder's ``*.json`` files are read in name order, each whole (one at a time);
only regular files are read (a FIFO named ``*.json`` would block the read: see
`_files`). A file that is not JSON, or an item that is not a `Session`, is
unreadable (`Unreadable`), named by the session it holds as far as it has one.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

from google.adk.sessions import Session
from pydantic import ValidationError

from .._errors import EvalSetupError
from ._files import OnUnreadable, Unreadable, first_line, not_a_file
from ._filter import SessionFilter
from ._source import SourceBase

__all__ = ["JsonSource"]


class JsonSource(SourceBase):
    """Sessions exported as JSON: a file of one `Session` or a list, or a folder of them.

    Args:
        path: The file or folder (``*.json`` under it, in name order).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = str(path)

    async def check(self) -> None:
        """Refuses what in the folder would block or never end (a FIFO, a device).

        Raises:
            EvalSetupError: One line naming it.
        """
        self._names()  # plain strings: a Path per file of a big folder would cost megabytes

    def _names(self) -> list[str]:
        """The files to read, in name order, every one a regular file.

        Plain strings: a folder of 10,000 files is 10,000 short strings.
        """
        if not self.path.is_dir():
            found = [str(self.path)]
        else:  # os.walk holds names, not one DirEntry and Path per file of a big folder
            found = sorted(
                os.path.join(root, name)
                for root, _, files in os.walk(self.path)
                for name in files
                if name.endswith(".json")
            )
        for name in found:
            kind = not_a_file(name)  # a Path per file would intern each name for good
            if kind is not None:
                raise EvalSetupError(
                    f"{name} is {kind}, not a file: exported sessions are regular .json "
                    f"files; move it out of {self.path} (nothing was read)"
                )
        return found

    async def read(
        self, filters: SessionFilter, unreadable: OnUnreadable
    ) -> AsyncIterator[tuple[Session, frozenset[str]]]:
        """The sessions that pass `filters`, lacking nothing, file by file, in name order.

        A file that is not JSON, or an item that is not a `Session`, is unreadable.

        Raises:
            EvalSetupError: A file that is not a regular file.
        """
        left = filters.limit
        for name in self._names():
            for session in _sessions_in(name):
                if isinstance(session, Unreadable):
                    unreadable(session)
                    continue
                if left == 0:
                    return
                if filters.keeps(session):
                    left = None if left is None else left - 1
                    yield session, frozenset()


def _sessions_in(path: str) -> list[Session | Unreadable]:
    """The sessions of one exported file (a file is read whole: one at a time)."""
    try:
        with open(path, encoding="utf-8") as file:
            data = json.loads(file.read())
    except (OSError, ValueError) as error:
        why = f"not exported session JSON (a Session object or a list of them): {first_line(error)}"
        return [Unreadable(str(path), why)]
    items = data if isinstance(data, list) else [data]
    found: list[Session | Unreadable] = []
    for index, item in enumerate(items):
        try:
            found.append(Session.model_validate(item))
        except ValidationError as error:
            where = f"{path}[{index}]" if isinstance(data, list) else str(path)
            found.append(Unreadable(_item_name(item, where), f"not a Session: {first_line(error)}"))
    return found


def _item_name(item: object, where: str) -> str:
    """An exported session's name (``app/user/id``, and where it is), as far as it has one."""
    if isinstance(item, dict):
        key = [item.get(snake, item.get(camel)) for snake, camel in _KEYS]
        if all(isinstance(part, str) for part in key):
            return f"{'/'.join(str(part) for part in key)} ({where})"
    return where


_KEYS = (("app_name", "appName"), ("user_id", "userId"), ("id", "id"))
