"""rt run, V8-style stack traces, rt.inspect and outgoing request logging."""
