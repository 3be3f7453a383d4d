"""The stores: their Protocols (ports.py), the in-memory twins, and what is kept on local disk."""
