"""assocmem as an AutoGen memory: what it recalls goes into the model context before a reply.

Run beside `assocmem up` (or with ASSOCMEM_URL and ASSOCMEM_API_KEY set):
    python docs/examples/autogen_memory.py
"""

import asyncio

from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import BufferedChatCompletionContext
from autogen_core.models import UserMessage

from assocmem.api.client import AsyncClient
from assocmem.integrations.autogen import AssocmemMemory


async def main() -> None:
    memory = AssocmemMemory(AsyncClient(scope={"user": "dana"}), budget=200)
    await memory.add(
        MemoryContent(content="Dana prefers window seats", mime_type=MemoryMimeType.TEXT)
    )
    context = BufferedChatCompletionContext(buffer_size=10)
    await context.add_message(UserMessage(content="Pick a seat for Dana", source="user"))
    await memory.update_context(context)  # an AssistantAgent(memory=[memory]) does this
    for message in await context.get_messages():
        print(type(message).__name__, "->", message.content)
    await memory.close()


asyncio.run(main())
