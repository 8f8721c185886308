"""schemacheck."""
