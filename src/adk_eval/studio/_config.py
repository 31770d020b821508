"""What the studio offers: agents to play (`SimulatedAgentConfig`) or eval cases.

``adk-eval studio TARGET`` names a Python object:

* ``path/to/file.py:NAME`` or ``package.module:NAME``: a `SimulatedAgentConfig`,
  a list of them, an `EvalCase`, or a list of cases;
* ``path/to/file.py`` or ``package.module``: every module-level
  `SimulatedAgentConfig` (or list of them) in it, else every `EvalCase`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.workflow import Workflow

from .._case import EvalCase
from .._errors import DiscoveryError, EvalSetupError, StudioNotFoundError
from .._suites._discovery import import_file, import_module, looks_like_module
from ..goldens._evalset import resolve_path
from ..goldens._export import snake_case

__all__ = ["SimulatedAgentConfig", "StudioTarget", "find_target", "load_targets"]


@dataclass(frozen=True)
class SimulatedAgentConfig:
    """An agent the person can play in the studio: they answer its model calls.

    Attributes:
        name: Display name.
        agent: The ADK agent; its tools run for real when the person calls them.
        eval_set_path: The EvalSet file exports are appended to (relative paths
            resolve against the working directory).
    """

    name: str
    agent: BaseAgent
    eval_set_path: str | Path

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise EvalSetupError("SimulatedAgentConfig.name must not be empty")
        if not isinstance(self.agent, BaseAgent):
            raise EvalSetupError(
                f"SimulatedAgentConfig `{self.name}`: `agent` must be an ADK agent, "
                f"got {type(self.agent).__name__}"
            )

    def resolve_eval_set_path(self) -> Path:
        """The export file as an absolute path."""
        return resolve_path(self.eval_set_path)


@dataclass(frozen=True)
class StudioTarget:
    """One entry of the studio's start page: an agent config or an eval case."""

    name: str
    config: SimulatedAgentConfig | None = None
    case: EvalCase | None = None
    eval_set_path: Path | None = None

    @property
    def agent(self) -> BaseAgent | Workflow:
        """The agent (or an eval case's Workflow) whose models the person plays."""
        if self.config is not None:
            return self.config.agent
        assert self.case is not None
        return self.case.root_agent

    @property
    def export_path(self) -> Path:
        """Where exports of this target go."""
        if self.config is not None:
            return self.config.resolve_eval_set_path()
        assert self.eval_set_path is not None
        return self.eval_set_path


def find_target(targets: Mapping[str, StudioTarget], name: str) -> StudioTarget:
    """The target named `name`.

    Raises:
        StudioError: There is no such target (404).
    """
    try:
        return targets[name]
    except KeyError:
        raise StudioNotFoundError(f"no target named {name!r}") from None


def _flatten(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _targets_from(objects: Iterable[Any], eval_set: Path | None) -> list[StudioTarget]:
    targets: list[StudioTarget] = []
    for item in objects:
        if isinstance(item, SimulatedAgentConfig):
            targets.append(StudioTarget(name=item.name, config=item))
        elif isinstance(item, EvalCase):
            path = eval_set or resolve_path(f"{snake_case(item.root_agent.name)}.evalset.json")
            targets.append(StudioTarget(name=item.name, case=item, eval_set_path=path))
    return targets


def load_targets(target: str, *, eval_set: str | Path | None = None) -> list[StudioTarget]:
    """Resolves ``TARGET`` (see the module doc) to the studio's entries.

    Args:
        target: The object to load.
        eval_set: Where exports of eval-case targets go (default
            ``{snake_case(agent)}.evalset.json`` in the working directory).

    Raises:
        DiscoveryError: With one line saying what is wrong.
    """
    location, _, attribute = target.rpartition(":") if ":" in target else (target, "", "")
    path = Path(location)
    if path.is_file():
        module = import_file(path)
    elif path.suffix == ".py":
        raise DiscoveryError(f"no such file: {location}")
    elif looks_like_module(location):
        module = import_module(location)
    else:
        raise DiscoveryError(f"no such file or module: {location}")
    export = resolve_path(eval_set) if eval_set is not None else None
    if attribute:
        if not hasattr(module, attribute):
            raise DiscoveryError(f"{location} has no attribute `{attribute}`")
        targets = _targets_from(_flatten(getattr(module, attribute)), export)
        if not targets:
            raise DiscoveryError(
                f"{target} is neither a SimulatedAgentConfig nor an EvalCase (nor a list of them)"
            )
    else:
        values = [v for k, v in vars(module).items() if not k.startswith("_")]
        flat = [item for value in values for item in _flatten(value)]
        configs = [item for item in flat if isinstance(item, SimulatedAgentConfig)]
        cases = [item for item in flat if isinstance(item, EvalCase)]
        targets = _targets_from(configs or cases, export)
        if not targets:
            raise DiscoveryError(
                f"{location} defines no SimulatedAgentConfig and no EvalCase at module level"
            )
    names = [t.name for t in targets]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DiscoveryError(f"two studio targets share a name: {', '.join(duplicates)}")
    return targets
