import net from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a PostgreSQL server, whose connections a test shapes. */
export interface TcpProxy {
  /** The server's URL with its host and port replaced by the proxy's. */
  url: string;
  /** Destroys every connection through it (both sides); new ones are still accepted. */
  destroyAll: () => void;
  /** Destroys every connection and stops listening. */
  close: () => Promise<void>;
}

/**
 * Starts a proxy for `url`. For each client that connects, `onClient` gets the client's socket and `open`,
 * which connects to the server and returns that socket; the two are destroyed together when either ends
 * or fails, and by `destroyAll`. What flows between them is `onClient`'s: pipe them, or watch the bytes.
 */
export async function startTcpProxy(
  url: string,
  onClient: (client: net.Socket, open: () => net.Socket) => void,
): Promise<TcpProxy> {
  const target = new URL(url);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    onClient(client, () => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      return upstream;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  const destroyAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    url: proxied.toString(),
    destroyAll,
    close: async () => {
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
