"""rt.CSRF: signed, expiring anti-forgery tokens, byte-compatible with the reference runtime."""
