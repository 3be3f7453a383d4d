"""A state as bytes and back: full snapshots, deltas, compressed frames, and the content hash."""
