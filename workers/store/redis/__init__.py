"""The stores on Redis: adapters, every key name, the Lua scripts, rate limits and API keys."""
