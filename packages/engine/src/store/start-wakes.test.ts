import { describe, expect, it } from 'vitest';
import type { InputShape } from './batched-statement.ts';
import { insertStartedRunsWithStepStatement, type StartWithFirstStep } from './insert-started-run-with-step.ts';
import type { StartedRun } from './insert-started-run.ts';
import { insertStartedRunsStatement } from './insert-started-runs.ts';

const now = new Date('2026-12-02T10:00:00Z');
const run: StartedRun = {
  flowName: 'f',
  flowVersion: 1,
  input: {},
  businessKey: null,
  tags: [],
  expiresAt: null,
  runTimeoutAt: null,
  now,
  lease: null,
};
const withStep: StartWithFirstStep = {
  id: '00000000-0000-0000-0000-000000000001',
  run,
  step: { sequence: 1, kind: 'action', name: 'a', input: {} } as StartWithFirstStep['step'],
  started: { type: 'action.started', sequence: 1, data: {} },
  workerId: 'w',
  claimedAt: now,
};

/** The `wakes` CTE each statement sent before the two shared one builder (start-wakes.ts), verbatim. */
const wakesAsSent = (a: 'i' | 'f', from: 'input' | 'fresh', firstDeliveries: string) => `wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at, locked_by, locked_until, deliveries)
      select 'wake-run', w.run_id, w.available_at, w.locked_by, w.locked_until, w.deliveries from (
        select ${a}.k, 1 as ord, r.id as run_id, ${a}.now as available_at, ${a}.locked_by, ${a}.locked_until,${firstDeliveries} as deliveries
          from run r join ${from} ${a} on ${a}.id = r.id
        union all
        select ${a}.k, 2, r.id, ${a}.run_timeout_at, null, null, 0
          from run r join ${from} ${a} on ${a}.id = r.id
         where ${a}.run_timeout_at is not null
      ) w
       order by w.k, w.ord
      returning id, run_id, locked_by
    )
`;

describe("the starts' statements queue their wakes with one shared CTE, their texts unchanged", () => {
  it.each<InputShape>(['scalars', 'arrays'])('%s: each statement sends the wakes text it sent before', (shape) => {
    expect(insertStartedRunsWithStepStatement([withStep], shape).text).toContain(wakesAsSent('i', 'input', ' 1'));
    expect(insertStartedRunsStatement([run], shape).text).toContain(
      wakesAsSent('f', 'fresh', '\n               case when f.locked_by is null then 0 else 1 end'),
    );
  });
});
