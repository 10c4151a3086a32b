import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createSweepProgress } from './sweep-progress.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

describe('sweep progress', () => {
  it('a pass logs rows done, rows left and its rate, and adds to the figures /metrics reads', () => {
    const { lines, logger } = capture();
    const progress = createSweepProgress();
    const pass = progress.start('expired_steps', { budgetMs: 60_000, logger });
    pass.add(1000);
    pass.add(500);
    expect(pass.outOfTime()).toBe(false);
    pass.end(250);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'sweep pass',
        sweep: 'expired_steps',
        rows_done: 1500,
        rows_left: 250,
        rows_per_second: expect.any(Number) as number,
      }),
    ]);
    const second = progress.start('expired_steps', { budgetMs: 60_000, logger });
    second.add(250);
    second.end(0);
    expect(progress.figures()).toEqual([
      expect.objectContaining({ sweep: 'expired_steps', rowsTotal: 1750, rowsLeft: 0 }),
    ]);
  });

  it('a pass that found nothing logs nothing; a spent budget says so before the next batch', () => {
    const { lines, logger } = capture();
    const progress = createSweepProgress();
    const idle = progress.start('doctor', { budgetMs: 60_000, logger });
    idle.end(0);
    expect(lines).toEqual([]);
    expect(progress.start('doctor', { budgetMs: 0, logger }).outOfTime()).toBe(true);
    expect(progress.figures()).toEqual([expect.objectContaining({ sweep: 'doctor', rowsTotal: 0, rowsLeft: 0 })]);
  });
});
