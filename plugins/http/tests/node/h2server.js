// An HTTP/2 server over TLS for rt.fetch's HTTP/2 test: prints its port, answers JSON with the protocol.
const http2 = require("http2");
const fs = require("fs");
const path = require("path");
const dir = process.argv[2];
const server = http2.createSecureServer({
  key: fs.readFileSync(path.join(dir, "key.pem")),
  cert: fs.readFileSync(path.join(dir, "cert.pem")),
  allowHTTP1: false,
});
server.on("stream", (stream, headers) => {
  stream.respond({ ":status": 200, "content-type": "application/json" });
  stream.end(JSON.stringify({ protocol: "h2", path: headers[":path"] }));
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
