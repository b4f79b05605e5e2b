"""The secret backends rt-secrets ships: ``keyring`` (the OS store) and ``memory`` (for tests)."""
