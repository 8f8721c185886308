"""revision."""
