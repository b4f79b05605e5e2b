"""rt.secrets: the OS credential store (Keychain, Secret Service, Credential Manager) from async Python."""
