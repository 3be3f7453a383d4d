"""Reads: evidence per query concept, links and chains, visibility, and ranking."""
