"""Command-line interface: options -> core call -> render -> exit code."""
