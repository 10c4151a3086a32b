import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that the test can cut: `cut()` destroys every connection through it
 * and, until `restore()`, destroys each new one at once (the database unreachable for its clients), counting
 * those attempts.
 */
export async function startCutProxy(url: string) {
  const target = new URL(url);
  const sockets = new Set<net.Socket>();
  const state = { cut: false, refused: 0 };
  const server = net.createServer((client) => {
    if (state.cut) {
      state.refused += 1;
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    state,
    cut: () => {
      state.cut = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore: () => {
      state.cut = false;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
