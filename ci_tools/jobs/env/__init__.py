"""The environment a job's recipe receives, derived from the repository's workflow templates."""
