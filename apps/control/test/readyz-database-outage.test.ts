import { createDatabase as createPgDatabase, startCluster, type PgCluster } from '@sagaflow/test-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/seed-known-set.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * Its own PostgreSQL cluster, because it stops the server: the suite's shared cluster serves the
 * other test files meanwhile.
 */
describe('/readyz follows the database; /healthz stays liveness; /metrics is off unless configured', () => {
  let cluster: PgCluster;
  let plane: ControlPlane;
  beforeAll(async () => {
    cluster = await startCluster();
    const url = await createPgDatabase(cluster.adminUrl, 'readyz');
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent', SAGAFLOW_READY_TIMEOUT_MS: '2000' }),
    );
  });
  afterAll(async () => {
    await plane?.stop();
    await cluster?.stop();
  });

  const probe = async (path: string) => {
    const res = await fetch(`${plane.url}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('without SAGAFLOW_METRICS_TOKEN or SAGAFLOW_METRICS_ADDRESS, /metrics is a 404 saying how to turn it on', async () => {
    const { status, body } = await probe('/metrics');
    expect(status).toBe(404);
    expect(body.error).toMatch(/SAGAFLOW_METRICS_TOKEN.*SAGAFLOW_METRICS_ADDRESS/);
  });

  it('ready while PostgreSQL answers, 503 with a reason while it is down, ready again once it is back', async () => {
    expect(await probe('/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });

    await cluster.pause();
    const down = await probe('/readyz');
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not_ready');
    expect(down.body.reason).toMatch(/database/);
    // The reason names a log id, not the server's address or the driver's error text.
    expect(JSON.stringify(down.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|sagaflow@/);
    // Liveness is about this process, not its database: still 200.
    expect((await probe('/healthz')).status).toBe(200);

    await cluster.resume();
    // The pool reconnects on its own: poll until it has (progress, not a fixed wait).
    const back = await eventually('readyz to answer 200 after the restart', async () => {
      const r = await probe('/readyz');
      return r.status === 200 ? r : undefined;
    });
    expect(back.body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
  });
});
