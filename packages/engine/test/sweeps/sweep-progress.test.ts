import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createSweepProgress } from '../../src/index.ts';

/** A logger at debug whose lines are kept, parsed, to see what a pass logged and at which level. */
function captured() {
  const lines: { level: number; msg: string; rows_done?: number; rows_left?: number | null }[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as (typeof lines)[0]);
        done();
      },
    }),
  );
  return { logger, passes: () => lines.filter((l) => l.msg === 'sweep pass') };
}

describe('sweep progress in the log (ADR 0026)', () => {
  const INFO = 30;
  const DEBUG = 20;
  it('a pass that found nothing logs nothing, whether it counted what is left or not', () => {
    const { logger, passes } = captured();
    const progress = createSweepProgress();
    progress.start('expired_steps', { budgetMs: 1000, logger }).end(null);
    progress.start('doctor', { budgetMs: 1000, logger }).end(0);
    expect(passes()).toEqual([]);
    expect(progress.figures().map((f) => f.lastPassAt !== null)).toEqual([true, true]);
  });

  it('a small pass that drained its candidates is debug; a big one or one that left a backlog is info', () => {
    const { logger, passes } = captured();
    const progress = createSweepProgress();
    const small = progress.start('outbox', { budgetMs: 1000, logger });
    small.add(3);
    small.end(null);
    const big = progress.start('outbox', { budgetMs: 1000, logger });
    big.add(500);
    big.end(0);
    const behind = progress.start('expired_steps', { budgetMs: 1000, logger });
    behind.add(2);
    behind.end(40_000);
    expect(passes().map((p) => [p.level, p.rows_done, p.rows_left])).toEqual([
      [DEBUG, 3, null],
      [INFO, 500, 0],
      [INFO, 2, 40_000],
    ]);
    expect(progress.figures().find((f) => f.sweep === 'outbox')?.rowsTotal).toBe(503);
  });
});
