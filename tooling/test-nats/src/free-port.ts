import { createServer } from 'node:net';

/**
 * Asks the kernel for an unused TCP port on `host` (bind to 0, read it, close). Someone else may take
 * it before the server binds it, which is why the caller retries on "address already in use".
 */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      probe.close(() => (port === undefined ? reject(new Error(`no port bound on ${host}`)) : resolve(port)));
    });
  });
}
