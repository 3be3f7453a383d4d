"""The processes: settings, the services built from them, the worker loop, the embedded redis-server."""
