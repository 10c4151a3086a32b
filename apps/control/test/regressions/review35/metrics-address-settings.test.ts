import net from 'node:net';
import { describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane } from '../../../src/start-control-plane.ts';

/** Starts a control plane that is expected not to start; returns its error (stops it if it did start). */
async function startError(source: Record<string, string>): Promise<Error | undefined> {
  const url = await testDatabaseUrl('r35addr');
  try {
    const plane = await startControlPlane(
      parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent', ...source }),
    );
    await plane.stop();
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/**
 * ADR 0017: with SAGAFLOW_METRICS_ADDRESS the control plane serves /metrics on a listener of its own,
 * and "the address is checked free before the database is opened"; a setting that cannot be used
 * must stop the start with an error naming it.
 */
describe('review 35: a SAGAFLOW_METRICS_ADDRESS that cannot be listened on', () => {
  it('an address in use stops the start, naming SAGAFLOW_METRICS_ADDRESS', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const { port } = busy.address() as net.AddressInfo;
    try {
      const err = await startError({ SAGAFLOW_METRICS_ADDRESS: `127.0.0.1:${port}` });
      expect(err?.message).toMatch(/SAGAFLOW_METRICS_ADDRESS/);
    } finally {
      busy.close();
    }
  });

  it('an address not on this host with a fixed port stops the start, naming SAGAFLOW_METRICS_ADDRESS', async () => {
    const err = await startError({ SAGAFLOW_METRICS_ADDRESS: '203.0.113.7:9464' });
    expect(err?.message).toMatch(/SAGAFLOW_METRICS_ADDRESS/);
  });

  it('an address not on this host with port 0 (any free port) stops the start, naming SAGAFLOW_METRICS_ADDRESS', async () => {
    // 0 is accepted by the setting ("0.0.0.0:0" is a documented example in metrics-settings.test.ts).
    const err = await startError({ SAGAFLOW_METRICS_ADDRESS: '203.0.113.7:0' });
    expect(err, 'the control plane started').toBeDefined();
    expect(err?.message).toMatch(/SAGAFLOW_METRICS_ADDRESS/);
  });
});
