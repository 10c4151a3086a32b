import { describe, expect, it } from 'vitest';
import type { TableActivity } from '../store/maintenance/read-table-activity.ts';
import { chooseMaintenance } from './choose-maintenance.ts';

const table = (over: Partial<TableActivity>): TableActivity => ({
  table: 't',
  deadTuples: 0,
  modifiedSinceAnalyze: 0,
  reltuples: 1000,
  bytes: 8192,
  ...over,
});

describe('chooseMaintenance keeps autovacuum’s rules (threshold 50 + scale factor)', () => {
  it.each([
    ['dead row versions just under 50 + 20 % of 1,000 rows', { deadTuples: 250, modifiedSinceAnalyze: 0 }, null],
    ['dead row versions past 50 + 20 % of 1,000 rows', { deadTuples: 251 }, 'vacuum-analyze'],
    ['changes just under 50 + 10 % of 1,000 rows', { modifiedSinceAnalyze: 150 }, null],
    ['changes past 50 + 10 % of 1,000 rows', { modifiedSinceAnalyze: 151 }, 'analyze'],
    ['both due: the vacuum analyzes too', { deadTuples: 251, modifiedSinceAnalyze: 500 }, 'vacuum-analyze'],
    ['never analyzed, empty: nothing to learn', { reltuples: -1, bytes: 0 }, null],
    ['never analyzed with pages, counters lost in a crash', { reltuples: -1, bytes: 8192 }, 'analyze'],
    [
      'never analyzed counts as empty: 51 dead versions are due',
      { reltuples: -1, bytes: 0, deadTuples: 51 },
      'vacuum-analyze',
    ],
    ['never analyzed counts as empty: 50 changes are not', { reltuples: -1, bytes: 0, modifiedSinceAnalyze: 50 }, null],
  ] as const)('%s', (_, over, command) => {
    const steps = chooseMaintenance([table(over)]);
    expect(steps.map((s) => s.command)).toEqual(command === null ? [] : [command]);
  });

  it('the table with the most dead row versions goes first, then the most changed', () => {
    const steps = chooseMaintenance([
      table({ table: 'a', modifiedSinceAnalyze: 400 }),
      table({ table: 'b', deadTuples: 300 }),
      table({ table: 'c', deadTuples: 9000 }),
      table({ table: 'd', modifiedSinceAnalyze: 900 }),
      table({ table: 'e' }),
    ]);
    expect(steps.map((s) => s.table)).toEqual(['c', 'b', 'd', 'a']);
  });
});
