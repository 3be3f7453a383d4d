"""What the application's commands and queries return: engine results and positions, no
HTTP shapes (api/http/responses.py turns these into JSON)."""

from __future__ import annotations

import dataclasses

from assocmem.engine.history.activity import PeriodSummary
from assocmem.engine.position import Position
from assocmem.engine.recall.chains import Chain
from assocmem.engine.recall.graph import Edge
from assocmem.engine.recall.prompt import PromptText
from assocmem.engine.recall.recall import Recall
from assocmem.engine.recall.time_window import Window
from assocmem.engine.state.memory import Memory


@dataclasses.dataclass(frozen=True, slots=True)
class PpmiAt:
    position: Position
    ppmi: float


@dataclasses.dataclass(frozen=True, slots=True)
class Written:
    position: Position
    concepts: tuple[str, ...]
    labels: tuple[str, ...]
    """The words people read for `concepts`."""
    tiers: list[int] | None
    is_duplicate: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Ingested:
    positions: list[Position]
    units: int
    links_from_units: int
    is_duplicate: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Rated:
    position: Position
    concepts: tuple[str, ...]
    labels: tuple[str, ...]
    is_duplicate: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Read:
    recall: Recall
    window: Window
    prompt: PromptText | None


@dataclasses.dataclass(frozen=True, slots=True)
class Chains:
    position: Position
    concepts: tuple[str, ...]
    labels: tuple[str, ...]
    unknown: tuple[str, ...]
    chains: list[Chain]


@dataclasses.dataclass(frozen=True, slots=True)
class Neighbourhood:
    position: Position
    concepts: tuple[str, ...]
    labels: tuple[str, ...]
    unknown: tuple[str, ...]
    """The concepts asked about that the state has never seen (they have no links)."""
    hops: int
    edges: list[Edge]


@dataclasses.dataclass(frozen=True, slots=True)
class Activities:
    position: Position
    start: float
    end: float
    entries: list[Memory]
    labels: dict[str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class Summary:
    position: Position
    period: str
    start: float
    end: float
    periods: list[PeriodSummary]
    labels: dict[str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class StateSummary:
    position: Position
    hash: str
    memories: int
    concepts: int
    documents: int
    written_links: int
    taught_links: int


@dataclasses.dataclass(frozen=True, slots=True)
class Health:
    tenant: str
    log_length: int
    served_position: Position | None
