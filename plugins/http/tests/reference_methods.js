// The reference runtime's own Bun.serve answering every request with its method (in x-method), for test_methods.py.
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    return new Response("ok", { headers: { "x-method": req.method } });  // a header: HEAD has no body
  },
});
console.log(server.port);
