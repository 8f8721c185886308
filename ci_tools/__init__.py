"""ci-tools: governs a GPU benchmark repository.

Schema validation of master configs and runners, append-only changelog
linting, consistency of changelog claims with what recipes really run, and
`/run-benchmark` dispatch to self-hosted runners.
"""

from __future__ import annotations

__version__ = "0.1.0"
