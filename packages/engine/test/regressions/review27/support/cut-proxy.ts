import { startTcpProxy } from '../../../support/tcp-proxy.ts';

/**
 * A TCP proxy in front of PostgreSQL that the test can cut: `cut()` destroys every connection through it
 * and, until `restore()`, destroys each new one at once (the database unreachable for its clients), counting
 * those attempts.
 */
export async function startCutProxy(url: string) {
  const state = { cut: false, refused: 0 };
  const proxy = await startTcpProxy(url, (client, open) => {
    if (state.cut) {
      state.refused += 1;
      client.destroy();
      return;
    }
    const upstream = open();
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return {
    url: proxy.url,
    state,
    cut: () => {
      state.cut = true;
      proxy.destroyAll();
    },
    restore: () => {
      state.cut = false;
    },
    close: proxy.close,
  };
}
