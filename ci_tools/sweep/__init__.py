"""Runner-side execution of sweep jobs: launchers, the executor, status records, reports."""
