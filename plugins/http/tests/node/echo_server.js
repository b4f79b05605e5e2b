// An echo server on Node's `ws` package for rt.WebSocket's interop test. argv[2]: "deflate" or "plain".
// Prints its port; echoes every message with its type; answers "close:<code>" by closing with that code;
// reports the request's x-test header and the negotiated extensions on "hello".
const { WebSocketServer } = require("ws");
const deflate = process.argv[2] === "deflate";
const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: deflate ? { threshold: 0 } : false,
  handleProtocols: (protocols) => (protocols.has("chat") ? "chat" : false) });
wss.on("connection", (ws, req) => {
  ws.on("message", (data, isBinary) => {
    const text = isBinary ? null : data.toString();
    if (text === "hello") {
      ws.send(JSON.stringify({ header: req.headers["x-test"] || null, extensions: req.headers["sec-websocket-extensions"] || null }));
    } else if (text !== null && text.startsWith("close:")) {
      ws.close(Number(text.slice(6)), "bye");
    } else {
      ws.send(data, { binary: isBinary });
    }
  });
});
wss.on("listening", () => process.stdout.write(`${wss.address().port}\n`));
