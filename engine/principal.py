"""Who is asking: the tenant whose memory it is, the agent acting, and whom it is about.

Every command and query of the application takes one. It comes from the caller's
credential at the edge, never from a request body or a model's tool arguments.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    agent: str
    user: str | None = None
