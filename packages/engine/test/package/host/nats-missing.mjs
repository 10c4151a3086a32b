// A host that configures the NATS JetStream transport without installing its optional peer dependencies
// (@nats-io/transport-node, @nats-io/jetstream): what does a publish say? Prints one JSON line.
import { existsSync } from 'node:fs';
import { natsJetStreamTransport } from '@sagaflow/engine';

// Stands in for the connection `connect()` would return; the transport must fail before it uses it.
const connection = { isClosed: () => false, closed: () => new Promise(() => {}) };
const transport = natsJetStreamTransport({ connection });
let refused;
try {
  await transport.publish({
    messageId: '00000000-0000-4000-8000-000000000001',
    destination: 'shipping',
    type: 'ship',
    sourceKind: 'flow',
    sourceId: 'r-1',
    headers: {},
    payload: {},
  });
  refused = { published: true };
} catch (e) {
  refused = { class: e.constructor.name, code: e.code ?? null, details: e.details ?? null, message: String(e.message) };
}
console.log(JSON.stringify({ installed: existsSync('node_modules/@nats-io'), refused }));
