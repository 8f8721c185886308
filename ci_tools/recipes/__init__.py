"""Bash recipes as data: parsing and per-job partial evaluation."""
