"""assocmem as an OpenAI Agents SDK session: the conversation's items, kept as memories.

Run beside `assocmem up` (or with ASSOCMEM_URL and ASSOCMEM_API_KEY set):
    python docs/examples/openai_agents_session.py

With a model: `await Runner.run(agent, "What did I book?", session=session)`.
"""

import asyncio

from assocmem.integrations.openai_agents import AssocmemSession


async def main() -> None:
    session = AssocmemSession("trip-planning", user="erin")
    await session.add_items(
        [
            {"role": "user", "content": "Book me a flight to Lisbon on May 3"},
            {"role": "assistant", "content": "Booked: TP 1351, May 3, 09:40"},
        ]
    )
    for item in await session.get_items():
        print(item["role"], "->", item["content"])
    await session.clear_session()
    await session.close()


asyncio.run(main())
