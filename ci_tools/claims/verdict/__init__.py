"""What the jobs really run for a claim's subject, and whether each claim holds: verdicts and findings."""
