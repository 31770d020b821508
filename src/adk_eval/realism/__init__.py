"""Realism: how real users and simulated users behave, measured the same way and compared."""

from __future__ import annotations

__all__: list[str] = []
