import { createEngine, defineAction, defineFlow } from '@sagaflow/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

/**
 * Review 50: ADR 0091 makes a closed run say which steps it left in flight (a worker held them when it
 * was terminated: whether each charged the card is not known, so check it), and the console lists them
 * first. `sagaflow run show` is the CLI's run page, what on-call reads at 3 a.m. over SSH: it must say
 * the same, not leave it inside an error cut at 300 characters.
 */
let release: (() => void) | null = null;
const ok = (name: string) => defineAction({ name, run: async () => ({ reference: `${name}-confirmation-0001` }) });
const reserve = ok('r50cli-reserve-seats');
const hotel = ok('r50cli-book-hotel');
const charge = defineAction({
  name: 'r50cli-charge-card',
  run: async () => {
    await new Promise<void>((r) => (release = r));
    return { charged: true };
  },
});
const flow = defineFlow({
  name: 'r50cli.trip',
  version: 1,
  run: async (ctx) => {
    await ctx.action(reserve, null).run();
    await ctx.action(hotel, null).run();
    await ctx.action(charge, null).run();
    return null;
  },
});

describe('review 50: run show names the steps a terminated run left in flight (real HTTP, PostgreSQL, child process)', () => {
  let plane: ControlPlane;
  let env: Record<string, string>;
  let worker: ReturnType<typeof createEngine>;
  beforeAll(async () => {
    const url = await testDatabaseUrl('review50_in_flight');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    const admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const { token } = await apiClient(plane.url, admin).tokens.create.mutate({ name: 'r50' });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    worker = createEngine({
      db: plane.db,
      flows: [flow],
      actions: [reserve, hotel, charge],
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    release?.();
    await worker?.stopWorkers(2000);
    await plane?.stop();
  });

  it('run show of a run terminated while its charge step ran says that step was in flight', async () => {
    worker.startWorkers();
    const { runId } = await worker.startFlow(flow, null);
    for (let i = 0; i < 800; i++) {
      const d = await worker.getRun(runId);
      if (d?.actions.some((a) => a.name === 'r50cli-charge-card' && a.status === 'Running')) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(await worker.terminate(runId, { reason: 'the customer called support to stop the booking' })).toEqual({
      terminated: true,
    });
    const detail = await worker.getRun(runId);
    // The engine states it (ADR 0091): the charge step is in flight.
    expect(detail?.run.leftUndone?.in_flight?.map((s) => s.name)).toEqual(['r50cli-charge-card']);

    const shown = await cli(['run', 'show', runId], env);
    expect(shown.code, shown.err).toBe(0);
    const inFlightLine = shown.out.split('\n').find((l) => /in flight|outcome unknown|unknown outcome/i.test(l)) ?? '';
    expect(inFlightLine, `run show printed:\n${shown.out}`).toContain('r50cli-charge-card');
    // Fix 50 (ADR 0124): the completed steps nobody will undo get their own line too, and the steps
    // table marks the step still Running on the ended run.
    const undoneLine = shown.out.split('\n').find((l) => l.startsWith('left undone')) ?? '';
    expect(undoneLine).toContain('step 1 r50cli-reserve-seats');
    expect(undoneLine).toContain('step 2 r50cli-book-hotel');
    expect(shown.out).toMatch(/r50cli-charge-card\s+Running \(run ended: outcome unknown\)/);
  }, 120_000);
});
