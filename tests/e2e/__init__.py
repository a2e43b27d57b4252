"""End-to-end tier: the workflows under act (marker e2e)."""
