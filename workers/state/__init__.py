"""States the readers serve: the live state, rebuilt past states and their caches."""
