"""The background jobs (RQ): fold, consolidation, erasure, archive, replay and audit, the scheduler and cron."""
