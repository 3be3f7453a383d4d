"""A Mem0 user's code, switched to assocmem by its import line alone.

Run beside `assocmem up` (or with ASSOCMEM_URL and ASSOCMEM_API_KEY set):
    python docs/examples/mem0_switch.py
"""

from assocmem.integrations.mem0 import Memory  # was: from mem0 import Memory

m = Memory()
m.add(
    [
        {"role": "user", "content": "I'm vegetarian and allergic to nuts"},
        {"role": "assistant", "content": "Got it: vegetarian, no nuts"},
    ],
    user_id="alice",
    metadata={"category": "food"},
)
m.add("Alice booked a table at a Lisbon seafood place", user_id="alice")

for hit in m.search("is alice allergic to anything", filters={"user_id": "alice"}, top_k=3)["results"]:
    print(f"{hit['score']:.3f}  {hit['source']:<11} {hit['memory']}")

first = m.get_all(filters={"user_id": "alice"})["results"][-1]
m.update(first["id"], "I'm vegan and allergic to nuts")
print([h["event"] for h in m.history(first["id"])])
m.delete_all(user_id="alice")
print("left:", m.get_all(filters={"user_id": "alice"})["results"])
