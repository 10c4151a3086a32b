// The console's server: Next's own request handler behind a plain Node HTTP server, so that the
// X-Forwarded-For the console sends to the control plane names the browser's real address. (`next
// start` keeps a client-sent X-Forwarded-For as it is, which let a client choose the address the
// control plane's per-address sign-in limit counts.) Usage: node serve.mjs -p <port> -H <host>.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import next from 'next';

const { values } = parseArgs({
  options: { port: { type: 'string', short: 'p', default: '3000' }, hostname: { type: 'string', short: 'H' } },
});
const port = Number(values.port);
const hostname = values.hostname ?? '0.0.0.0';
// Load balancers in front of the console whose X-Forwarded-For is believed (they append the client).
const trustedProxies = new Set(
  (process.env.CONSOLE_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
);

const app = next({ dev: false, dir: import.meta.dirname, hostname, port });
await app.prepare();
const handle = app.getRequestHandler();

const server = createServer((req, res) => {
  const peer = req.socket.remoteAddress ?? '';
  const forwarded = req.headers['x-forwarded-for'];
  // A trusted proxy's list is kept (its last entry is the client it saw); anyone else's is replaced.
  if (!(trustedProxies.has(peer) && forwarded)) req.headers['x-forwarded-for'] = peer;
  void handle(req, res);
});
// Silent once listening: `npm start`'s banner says where the console is.
server.listen(port, hostname);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
