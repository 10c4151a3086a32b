import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { fulfilmentProcess } from '../../../src/demo/fulfilment-process.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { type apiClient, signedInClient, testDatabaseUrl } from '../../support/test-plane.ts';

/**
 * Review 39 (held). ADR 0035: an instance's history pages by a keyset on its unique order, and an open
 * view polls only what is newer (`after` the newest id it holds). Transition ids come from a sequence,
 * so a poll would miss a row whose id was taken before a newer row committed; for one instance that
 * cannot happen as long as every history write holds the instance's row lock. Attacked: three
 * delivery loops land customer notes on one instance while a viewer polls `instances.transitions`
 * with `after` (small pages) as fast as it can; the rows it saw must be the whole history, each once,
 * in order.
 */
describe('instance history polled while deliveries land (PostgreSQL)', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('review39_history_poll'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
      }),
    );
    api = await signedInClient(plane, 'viewer');
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('a poll after the newest id it holds sees every transition once, in order', async () => {
    const orderId = randomUUID();
    const note = (n: string) =>
      plane.engine.processes.deliver(fulfilmentProcess, {
        id: `note-${randomUUID()}`,
        type: 'CustomerNoteAdded',
        payload: { orderId, note: n },
      });
    const id = (await note('first')).instanceId ?? '';
    const seen: string[] = [];
    const poll = async () => {
      for (;;) {
        const page = await api.instances.transitions.query({
          id,
          limit: 7,
          ...(seen.length ? { after: seen.at(-1) } : {}),
        });
        seen.push(...page.rows.map((r) => r.id));
        if (!page.more) return;
      }
    };
    let landing = true;
    const loops = [0, 1, 2].map(async (loop) => {
      for (let i = 0; i < 25; i++) await note(`loop ${loop} note ${i}`);
    });
    const all = Promise.all(loops).then(() => {
      landing = false;
    });
    let polls = 0;
    while (landing) {
      await poll();
      polls++;
    }
    await all;
    await poll();

    const history = await plane.db.prisma.processTransition.findMany({
      where: { instance_id: id },
      orderBy: { id: 'asc' },
      select: { id: true },
    });
    expect(history).toHaveLength(76);
    expect(polls).toBeGreaterThan(1);
    expect(seen).toEqual(history.map((h) => String(h.id)));
  });
});
