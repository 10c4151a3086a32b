import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { parsePrometheus } from '../../support/parse-prometheus.ts';
import { testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const token = 'review35-scrape-token-0123456789';

/**
 * A TCP proxy in front of the test server that can black-hole: while `frozen`, bytes either way are
 * dropped and a new connection is accepted but never answered (a partition, a hung server, a
 * firewall that drops packets), which a refused connection (pg_ctl stop) does not show.
 */
async function startBlackHoleProxy(url: string) {
  const target = new URL(url);
  const state = { frozen: false };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined).on('close', () => sockets.delete(client));
    if (state.frozen) return; // accepted, never answered
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on('error', () => client.destroy()).on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.on('data', (b) => {
      if (!state.frozen) upstream.write(b);
    });
    upstream.on('data', (b) => {
      if (!state.frozen) client.write(b);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    state,
    /** Ends every connection through it, so the pool opens new ones once unfrozen. */
    dropAll: () => {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function timedScrape(url: string, abortAfterMs: number) {
  const t0 = Date.now();
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(abortAfterMs),
    });
    return { status: res.status, body: await res.text(), ms: Date.now() - t0 };
  } catch (err) {
    return { status: 0, body: String(err), ms: Date.now() - t0 };
  }
}

/**
 * ADR 0017: "a slow database fails the scrape (503 naming the setting, detail logged under an id)
 * instead of piling up connections". Here the database does not refuse: it stops answering.
 */
describe('review 35: /metrics while the database stops answering (a black hole, not a refusal)', () => {
  let proxy: Awaited<ReturnType<typeof startBlackHoleProxy>>;
  let plane: ControlPlane;
  const timeoutMs = 1000;
  beforeAll(async () => {
    proxy = await startBlackHoleProxy(await testDatabaseUrl('r35blackhole'));
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: proxy.url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_METRICS_TOKEN: token,
        SAGAFLOW_METRICS_TIMEOUT_MS: String(timeoutMs),
        SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS: '0',
      }),
    );
  });
  afterAll(async () => {
    proxy.state.frozen = false;
    proxy.dropAll();
    await plane?.stop().catch(() => undefined);
    await proxy?.close();
  });

  it('a scrape answers 503 naming SAGAFLOW_METRICS_TIMEOUT_MS within a few seconds, and once the database answers again scrapes are 200', async () => {
    const healthy = await timedScrape(`${plane.url}/metrics`, 10_000);
    expect(healthy.status).toBe(200);
    parsePrometheus(healthy.body);

    proxy.state.frozen = true;
    // Three scrapers at once, as several Prometheus replicas would: each must get an answer.
    const during = await Promise.all([0, 1, 2].map(() => timedScrape(`${plane.url}/metrics`, 20_000)));
    for (const d of during) {
      expect(d.status, `answered after ${d.ms} ms: ${d.body.slice(0, 200)}`).toBe(503);
      expect(d.body).toContain('SAGAFLOW_METRICS_TIMEOUT_MS');
      // The bound is 1 s; a pool connect waits up to 5 s (create-database.ts): allow both, and a margin.
      expect(d.ms).toBeLessThan(timeoutMs + 8000);
    }
    // /healthz stays liveness meanwhile: the process is not hung.
    const health = await fetch(`${plane.url}/healthz`, { signal: AbortSignal.timeout(5000) });
    expect(health.status).toBe(200);

    proxy.state.frozen = false;
    proxy.dropAll();
    let last = { status: 0, body: '', ms: 0 };
    for (let i = 0; i < 40 && last.status !== 200; i++) last = await timedScrape(`${plane.url}/metrics`, 20_000);
    expect(last.status, last.body.slice(0, 300)).toBe(200);
  });
});
