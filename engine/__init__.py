"""Pure domain code: events, concept extraction, the fold, snapshots and recall.

Nothing here touches Redis, the network, the clock or randomness, so folding the
same events always gives the same state, byte for byte.
"""
