import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/create-engine.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fastConfig, longLoop, loopStep } from './support/long-loop.ts';

const script = fileURLToPath(new URL('./support/kill-in-a-long-loop-worker.ts', import.meta.url));

/**
 * Review 49 (2). A worker SIGKILLed inside step 2,000 of a 2,500-step run: another worker reclaims that
 * step once its deadline passes, the run goes on from there (2,001 onwards), and every step has one
 * row, one outcome, and ran once, except the killed one, which ran twice (at-least-once, seed 000).
 */
describe('a worker SIGKILLed at step 2,000 of a long run', () => {
  const suite = childWorkerSuite();

  it('is reclaimed, and the run goes on from step 2,000 with one outcome per step', { timeout: 300_000 }, async () => {
    const n = 2500;
    const child = await suite.spawn(script, { args: ['2000'] });
    const engine = suite.adopt(
      createEngine({
        db: suite.db,
        flows: [longLoop],
        actions: [loopStep],
        config: fastConfig,
        logger: pino({ level: 'silent' }),
      }),
    );
    const { runId } = await engine.startFlow(longLoop, { n });
    await child.printed(/^at 2000$/m, 240_000);
    expect(await child.kill()).toBe('SIGKILL');
    const before = await suite.db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(before).toHaveLength(2000);
    expect(before.slice(0, 1999).every((r) => r.status === 'Completed' && r.attempts === 1)).toBe(true);
    expect(before[1999]).toMatchObject({ sequence: 2000, status: 'Running', attempts: 1 });

    engine.startWorkers();
    const run = await waitFor(
      'the run to end',
      async () => {
        const r = await suite.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return ['Pending', 'Running', 'Waiting', 'Compensating'].includes(r.status) ? undefined : r;
      },
      240_000,
    );
    expect(run.status).toBe('Completed');
    expect(run.output).toEqual({ sum: (n * (n - 1)) / 2 });
    const rows = await suite.db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: n }, (_, k) => k + 1));
    expect(rows.filter((r) => r.status !== 'Completed')).toEqual([]);
    const twice = rows.filter((r) => r.attempts !== 1).map((r) => [r.sequence, r.attempts]);
    expect(twice).toEqual([[2000, 2]]);
    const completedEvents = await suite.db.prisma.flowEvent.groupBy({
      by: ['sequence'],
      where: { run_id: runId, type: 'action.completed' },
      _count: { _all: true },
    });
    expect(completedEvents).toHaveLength(n);
    expect(completedEvents.filter((e) => e._count._all !== 1)).toEqual([]);
  });
});
