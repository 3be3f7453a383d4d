"""assocmem: long-term associative memory for AI agents, event-sourced on Redis."""
