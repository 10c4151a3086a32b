import { describe, expect, it } from 'vitest';
import { BenchOptionError, parseBenchOptions } from './bench-options.ts';

describe('parseBenchOptions', () => {
  it('runs 3 rounds and every section by default; --quick runs 1 round without the Sagaflow-alone sections', () => {
    expect(parseBenchOptions([])).toEqual({
      quick: false,
      rounds: 3,
      sagaflowAlone: true,
      pglite: true,
      scaleOut: true,
      readme: true,
      notify: true,
    });
    expect(parseBenchOptions(['--', '--quick'])).toEqual({
      quick: true,
      rounds: 1,
      sagaflowAlone: false,
      pglite: true,
      scaleOut: true,
      readme: false,
      notify: true,
    });
    expect(parseBenchOptions(['--quick', '--rounds', '2']).rounds).toBe(2);
  });

  it('skips PGlite and the worker processes on request', () => {
    expect(parseBenchOptions(['--quick', '--no-pglite', '--no-scale-out'])).toMatchObject({
      pglite: false,
      scaleOut: false,
    });
  });

  it("turns Sagaflow's NOTIFY listener off on request", () => {
    expect(parseBenchOptions(['--quick', '--no-notify']).notify).toBe(false);
  });

  it.each([['0'], ['21'], ['2.5'], ['three']])('refuses --rounds %s, naming the flag', (value) => {
    expect(() => parseBenchOptions(['--rounds', value])).toThrow(BenchOptionError);
    expect(() => parseBenchOptions(['--rounds', value])).toThrow(/--rounds must be a whole number from 1 to 20/);
  });

  it('refuses an unknown flag by name', () => {
    try {
      parseBenchOptions(['--fast']);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BenchOptionError);
      expect((error as BenchOptionError).option).toBe('--fast');
    }
  });
});
