// The reference runtime's own WebSocket server (Bun.serve) for bench/ws.py, doing what bench/ws_server.py's
// servers do: echo, or republish every message to topic "room", or hold idle connections.
//
//     tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun bench/ws_bun.js echo|chat|idle
//
// Prints "READY <port>" once listening.
const mode = process.argv[2] || "echo";
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req, server) {
    if (server.upgrade(req)) return undefined;
    return new Response("websocket only", { status: 400 });
  },
  websocket: {
    idleTimeout: 0,
    sendPings: false,
    maxPayloadLength: 16 * 1024 * 1024,
    perMessageDeflate: false,
    open(ws) {
      if (mode === "chat") ws.subscribe("room");
    },
    message(ws, message) {
      if (mode === "echo") ws.send(message);
      else if (mode === "chat") server.publish("room", message);
    },
  },
});
console.log(`READY ${server.port}`);
