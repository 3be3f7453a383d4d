"""assocmem as an MCP server (the official MCP Python SDK), for any agent framework: tools to
remember, recall (with the `via` path that brought each memory), rate answers, find chains,
log activities and look at the graph.

The server talks to the API with the key of its configuration: the tenant, the agent and
what they may do come from that key, never from a tool argument, so a model cannot reach
another tenant's memory by asking. Recall and chains degrade: when the service is down or
slow they answer empty, flagged `degraded`, within DEGRADE_AFTER seconds, and the agent's
run goes on.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from assocmem.api.client.calls import Calls, tool_calls
from assocmem.api.client.sync import Client
from assocmem.api.errors import ApiError
from assocmem.engine.recall.prompt import MAX_BUDGET, MIN_BUDGET

DEGRADE_AFTER = 2.0
"""Seconds a recall or a chain may take before it answers empty, flagged degraded."""
INSTRUCTIONS = """Long-term associative memory. `remember` what is worth keeping; `recall`
before answering (each memory says which link brought it: `via`); after answering, rate the
memories you used with `feedback` so the links that helped grow stronger."""

Concepts = Annotated[
    list[str] | None,
    Field(description="Concepts (keywords) to file the memory under; extracted when absent."),
]


def build_server(client: Client, allow_forget: bool = False) -> MCPServer:
    """The tools, over `client` (give it a key and `degrade_after`); `forget` only when
    `allow_forget` (it erases for good, and needs an admin key)."""
    server = MCPServer("assocmem", instructions=INSTRUCTIONS, version="0.1.0")

    def tool(name: str | None = None) -> Callable[[Tool], Tool]:
        """`server.tool`, for a function whose refusals reach the model with their reason."""
        return lambda function: server.tool(name=name, description=_described(function))(
            _explained(function)
        )

    @tool()
    def remember(
        text: Annotated[str, Field(description="What to remember, in plain words.")],
        concepts: Concepts = None,
        importance: Annotated[int, Field(ge=1, le=5, description="1 (trivia) to 5")] = 3,
        key: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                description="An idempotency key: remember sent again with the same key stores"
                " the memory once.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Store a memory. Returns its id (to rate it later) and the concepts it was filed under."""
        written = client.write(text, concepts=concepts, importance=importance, key=key)
        return {
            "id": written["id"],
            "concepts": written["concepts"],
            "duplicate": written["duplicate"],
        }

    @tool()
    def recall(
        query: Annotated[str, Field(description="A question or a few words.")],
        depth: Annotated[
            Literal["fast", "standard", "deep"],
            Field(description="deep also follows chains of links"),
        ] = "standard",
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        budget: Annotated[
            int | None,
            Field(
                ge=MIN_BUDGET,
                le=MAX_BUDGET,
                description="Tokens of prompt text to return as well: the memories, best"
                " first, within this budget.",
            ),
        ] = None,
        time: Annotated[
            str | None,
            Field(
                max_length=200,
                description="A time range in words ('last week', 'in March', '昨天');"
                " found in the query when not given.",
            ),
        ] = None,
        floor: Annotated[
            float | None,
            Field(
                ge=0,
                description="Times two concepts must have been written together"
                " before a link between them is followed (default 2).",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Memories for the query, direct and through links: each says how it was found
        (`source`) and the links that brought it (`via`, with weights); with a `budget`,
        also `prompt`: the memories as text within that many tokens. `degraded: true`
        means memory is unavailable right now: go on without it."""
        found = client.read(
            query, depth=depth, limit=limit, token_budget=budget, time=time, floor=floor
        )
        answer = {
            "degraded": found.get("degraded", False),
            **({"reason": found["reason"]} if found.get("degraded") else {}),
            "items": [_item(i) for i in found.get("items", [])],
        }
        if found.get("prompt"):
            answer["prompt"] = found["prompt"]["text"]
        return answer

    @tool()
    def feedback(
        ids: Annotated[list[str], Field(description="Ids of the memories the answer used.")],
        outcome: Annotated[float, Field(ge=-1.0, le=1.0, description="-1 (wrong) to 1 (right)")],
        query: Annotated[str, Field(description="The question they answered.")],
    ) -> dict[str, Any]:
        """Rate the memories an answer used: links from the question's concepts to theirs are
        taught stronger (or weaker), so the next recall of such a question finds them."""
        rated = client.feedback(ids, outcome, text=query)
        return {"position": rated["position"], "concepts": rated.get("concepts", [])}

    @tool()
    def find_chain(
        concepts: Annotated[list[str], Field(min_length=2, description="Two or more concepts.")],
    ) -> dict[str, Any]:
        """The strongest chains of links between the concepts, with the hidden ones between."""
        return client.find_chain(concepts)

    @tool()
    def log_activity(
        text: Annotated[str, Field(description="What happened.")],
        category: Annotated[str | None, Field(description="e.g. deploy, meeting")] = None,
        tags: Annotated[list[str] | None, Field(description="Free labels.")] = None,
    ) -> dict[str, Any]:
        """Append an activity-log entry (what was done, when); its concepts feed the links."""
        logged = client.log_activity(text, category=category, tags=tags)
        return {"id": logged["id"], "concepts": logged["concepts"]}

    @tool()
    def graph(
        concepts: Annotated[list[str], Field(min_length=1, max_length=20)],
        hops: Annotated[int, Field(ge=1, le=3)] = 1,
    ) -> dict[str, Any]:
        """The links around the concepts: weight, co-occurrence count, learned delta."""
        return client.graph(concepts, hops)

    for name, call in tool_calls().items():
        tool(name)(_tool_of(client, call))

    if allow_forget:

        @tool()
        def forget(
            kind: Annotated[
                Literal["user", "session", "namespace"], Field(description="What to erase.")
            ],
            value: Annotated[str, Field(min_length=1, max_length=128, description="Its id.")],
        ) -> dict[str, Any]:
            """Erase for good every event of a user, a session or a namespace of this
            tenant: the log, its archive, the snapshots and the store's files are rewritten
            without them. Returns the erasure job (its report comes when it finishes)."""
            job = client.forget(kind, value)
            return {"job": job["id"], "state": job["state"]}

    return server


Tool = TypeVar("Tool", bound=Callable[..., Any])


def _described(function: Callable[..., Any]) -> str:
    """A function's docstring as a model reads it: one line a paragraph, no indentation."""
    return re.sub(r"(?<!\n)\n(?!\n)", " ", inspect.getdoc(function) or "")


def _explained(function: Tool) -> Tool:
    """`function`, raising what the API refused as a ToolError, whose message the model
    reads (the SDK shows only 'Error executing tool' for any other exception)."""

    @functools.wraps(function)
    def explained(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except ApiError as exc:
            raise ToolError(str(exc)) from exc

    return explained  # type: ignore[return-value]


WHOSE = frozenset({"self", "tenant", "agent", "user", "session", "namespace"})
"""Parameters a call may have and its tool never has: whose memory it is comes from the
server's key and configuration (each has a default in the call)."""


def _tool_of(client: Client, name: str) -> Callable[..., dict[str, Any]]:
    """The client's call `name` as a tool function: its parameters (less WHOSE), its
    docstring."""
    call = getattr(client, name)
    declared = inspect.signature(getattr(Calls, name), eval_str=True)
    parameters = [p for p in declared.parameters.values() if p.name not in WHOSE]

    def tool(**arguments: Any) -> dict[str, Any]:
        return call(**arguments)  # type: ignore[no-any-return]

    tool.__name__ = name
    tool.__doc__ = inspect.getdoc(getattr(Calls, name))
    tool.__signature__ = declared.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=dict[str, Any]
    )
    return tool


def _item(item: dict[str, Any]) -> dict[str, Any]:
    """What a model needs of a recalled memory (the API's item carries more)."""
    kept = ("id", "text", "concepts", "source", "score", "via", "beside", "ts")
    return {k: item[k] for k in kept if k in item}


def tool_schemas(server: MCPServer) -> list[dict[str, Any]]:
    """The tools as function-calling schemas: name, description, JSON-schema parameters."""
    tools = asyncio.run(server.list_tools())
    return [
        {"name": t.name, "description": t.description, "parameters": t.input_schema} for t in tools
    ]
