"""The faces of assocmem: HTTP app, Python client, CLI and the `up` supervisor."""
