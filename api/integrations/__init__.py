"""Adapters that plug assocmem into the frameworks agents already live in, each built on the
clients alone and importable as `assocmem.integrations.<name>`:

- `mem0.Memory`: Mem0's methods and arguments, so a Mem0 user switches with one import;
- `langgraph.AssocmemStore`: LangGraph's `BaseStore`, sync and async;
- `langchain.AssocmemRetriever`: LangChain's `BaseRetriever`;
- `autogen.AssocmemMemory`: AutoGen's `Memory`;
- `openai_agents.AssocmemSession`: the OpenAI Agents SDK's `Session`.

Each framework is an optional extra (`pip install 'assocmem[langgraph]'`); docs/ has a page
and a runnable example for each."""
