"""The folded state: memories, concept vocabulary, counts and learned links, and the fold that builds it."""
