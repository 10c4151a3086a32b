import { createServer } from 'node:net';

/**
 * A TCP port that was free a moment ago on `host`: binds port 0, reads the port the kernel chose and
 * releases it. Another process can take it before we use it, so callers retry on a bind failure.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error(`could not read the port bound on ${host}`));
      });
    });
  });
}
