"""Text into concepts and queries: extraction (at append time), questions, time expressions, matching, prompt text."""
