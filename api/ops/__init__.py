"""Running a pipeline: `assocmem up` and its run file, spawning it from scripts, logging."""
