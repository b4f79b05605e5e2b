// Interop client for test_interop.py: connects with Node's `ws`, echoes a text, a binary and a 70 KB message
// through rt.serve, checks the pub/sub broadcast, then closes with 4000 and prints one JSON line.
const WebSocket = require("ws");

const url = process.argv[2];
const ws = new WebSocket(url, ["chat"]);
const got = [];
const big = Buffer.alloc(70000, 7);

ws.on("open", () => {
  ws.send("hello from node");
  ws.send(Buffer.from([0, 1, 2, 255]));
  ws.send(big);
  ws.send("broadcast please");
});
ws.on("message", (data, isBinary) => {
  got.push(isBinary ? { binary: data.length, first: data[0], last: data[data.length - 1] } : { text: data.toString() });
  if (got.length === 5) ws.close(4000, "node done");
});
ws.on("close", (code, reason) => {
  console.log(JSON.stringify({ protocol: ws.protocol, got, code, reason: reason.toString() }));
  process.exit(0);
});
ws.on("error", (err) => {
  console.log(JSON.stringify({ error: String(err) }));
  process.exit(1);
});
setTimeout(() => { console.log(JSON.stringify({ error: "timeout", got })); process.exit(2); }, 10000);
