"""GitHub integration: the ``/run-benchmark`` comment command and the REST calls it makes."""
