"""Everything that touches Redis or runs in the background: the log, snapshots, jobs."""
