"""rt.serve: an HTTP and WebSocket server with topic pub/sub, on anyio."""
