// The same echo server on the reference runtime's own Bun.serve, for rt.WebSocket's interop test.
const deflate = process.argv[2] === "deflate";
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req, server) {
    const protocols = (req.headers.get("sec-websocket-protocol") || "").split(",").map((p) => p.trim());
    const headers = protocols.includes("chat") ? { "Sec-WebSocket-Protocol": "chat" } : {};
    if (server.upgrade(req, { data: { header: req.headers.get("x-test"), extensions: req.headers.get("sec-websocket-extensions") }, headers })) return;
    return new Response("upgrade failed", { status: 400 });
  },
  websocket: {
    perMessageDeflate: deflate,
    message(ws, message) {
      if (message === "hello") ws.send(JSON.stringify(ws.data));
      else if (typeof message === "string" && message.startsWith("close:")) ws.close(Number(message.slice(6)), "bye");
      else ws.send(message);
    },
  },
});
console.log(server.port);
