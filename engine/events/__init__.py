"""Events: the envelope, the payload checks they share, one record per event type
(schema, version, upcasters, fold handler) with the registry of them, and the fold."""
