"""The log's history: audits of links and memories, diffs between two points, consolidation decisions, the activity log."""
