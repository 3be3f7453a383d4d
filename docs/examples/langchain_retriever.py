"""assocmem as a LangChain retriever: documents with how each was found.

Run beside `assocmem up` (or with ASSOCMEM_URL and ASSOCMEM_API_KEY set):
    python docs/examples/langchain_retriever.py
"""

from assocmem.api.client import Client
from assocmem.integrations.langchain import AssocmemRetriever

client = Client()
client.write("The billing job timed out twice last night", metadata={"ticket": 41})
client.write("Billing timeouts come from the slow invoice query")
retriever = AssocmemRetriever(client=client, limit=3)
for doc in retriever.invoke("why does billing time out"):
    print(f"{doc.metadata['score']:.3f}  {doc.metadata['source']:<11} {doc.page_content}")
