"""Benchmark results: per-job records, metrics as InferenceX computes them, baselines, verdicts, the PR comment."""
