"""An encrypted-file secrets backend for rt.secrets, for machines with no OS keyring."""
