"""A LangGraph graph whose long-term memory is assocmem: each user's memories in their own
scope, recalled by meaning (links included) before the reply.

Run beside `assocmem up` (or with ASSOCMEM_URL and ASSOCMEM_API_KEY set):
    python docs/examples/langgraph_store.py
"""

from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from assocmem.integrations.langgraph import AssocmemStore


class Chat(TypedDict):
    user: str
    message: str
    reply: str


def remember_and_answer(state: Chat, *, store: BaseStore) -> dict[str, str]:
    namespace = ("memories", state["user"])
    store.put(namespace, f"m{len(store.search(namespace, limit=1000))}", {"text": state["message"]})
    found = store.search(namespace, query=state["message"], limit=3)
    return {"reply": " | ".join(item.value["text"] for item in found)}


builder = StateGraph(Chat)
builder.add_node("remember_and_answer", remember_and_answer)
builder.add_edge(START, "remember_and_answer")
builder.add_edge("remember_and_answer", END)
graph = builder.compile(store=AssocmemStore(user_at=1))  # ("memories", user): the user scope

for message in ("I'm flying to Lisbon on May 3", "Which flight am I on?"):
    print(graph.invoke({"user": "alice", "message": message, "reply": ""})["reply"])
