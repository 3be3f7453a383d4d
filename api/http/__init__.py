"""The HTTP app: routes, request and response shapes, the key check, problem responses, metrics."""
