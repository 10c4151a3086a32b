import { parseArgs } from 'node:util';
import { measureBackendArms, parseRounds } from './measure-backend-arms.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:step-events [flows per round] [rounds]`: what a flow's six
 * step events (each step's `action.started` and its outcome's event) cost one backend's CPU per flow
 * (ADR 0072), apart from the machine's load and the commits' flushes. A database per arm in one
 * throwaway cluster, migrated alike, foreign keys kept; one connection each. Each round writes `flows`
 * 3-step flows' rows on each, as the hot path writes them (start: the run, step 1, its events; two
 * transitions: the run locked for no key update, the step closed, the next one, their events; the
 * finish: the run locked for update and finished, its events), one transaction per hot statement, from
 * a server-side loop. The arms ({@link arms}) differ only in the events they store.
 */
async function main(): Promise<void> {
  const { positionals } = parseArgs({ allowPositionals: true, args: process.argv.slice(2).filter((a) => a !== '--') });
  const { flows, rounds } = parseRounds(positionals);
  await measureBackendArms(
    (Object.keys(arms) as Events[]).map((events) => ({
      name: arms[events],
      template: `events_${events}`,
      options: {},
      writeFlows: (n: number) => writeFlows(n, events),
    })),
    flows,
    rounds,
  );
}

/** The events an arm stores per flow, and its name in the table. */
const arms = {
  /** Today: nine rows, one per event. */
  all: 'all nine events, a row each',
  /**
   * Five rows: each pair of events one statement writes together in one row, the second event's
   * columns beside the first's (here in the row's data, as many bytes as columns of their own).
   */
  packed: 'nine events in five rows',
  /** The run's three events, and two `nextval`s of the events' sequence per step (ids kept for derived events). */
  ids: 'run events and ids reserved for the steps',
  /** The run's three events only: no step event at all, the bound of any cheaper storage. */
  run: 'run events only',
} as const;
type Events = keyof typeof arms;

/**
 * `flows` 3-step flows' rows, one transaction per hot statement: 3 step rows (inserted, then closed)
 * and the flow's events as `events` stores them; a step event carries its sequence, row, name and
 * attempt, as the hot path's do.
 */
function writeFlows(flows: number, events: Events): string {
  const data = (s: string) => `jsonb_build_object('name', 'a' || ${s}) || jsonb_build_object('attempt', 1)`;
  const step = (type: string, s: string, row: string) => ({ type, s, row, data: data(s) });
  const run = (type: string, json: string) => ({ type, s: 'null', row: 'null', data: `'${json}'::jsonb` });
  type Event = ReturnType<typeof step>;
  const tuple = (e: Event, then?: Event) =>
    `(r, '${e.type}', ${e.s}, ${e.row}, ${e.data}${then ? ` || jsonb_build_object('then', jsonb_build_object('type', '${then.type}', 'sequence', ${then.s}, 'row_id', ${then.row}, 'data', ${then.data}))` : ''})`;
  /** The insert of a statement's events, in order: a row each, two to a row (`packed`), or the run's only. */
  const insert = (...list: Event[]) => {
    const kept = events === 'all' || events === 'packed' ? list : list.filter((e) => e.row === 'null');
    const rows: string[] = [];
    for (let n = 0; n < kept.length; n++)
      if (events === 'packed' && n + 1 < kept.length) rows.push(tuple(kept[n]!, kept[++n]));
      else rows.push(tuple(kept[n]!));
    const reserve = events === 'ids' ? list.filter((e) => e.row !== 'null').length : 0;
    const ids = Array.from({ length: reserve }, () => `nextval('"sagaflow"."flow_events_id_seq"')`);
    return [
      ids.length > 0 ? `perform ${ids.join(', ')};` : '',
      rows.length > 0
        ? `insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data) values ${rows.join(', ')};`
        : '',
    ].join('\n');
  };
  return `do $$
    declare r uuid; a uuid; p uuid;
    begin
      for i in 1..${flows} loop
        r := gen_random_uuid();
        insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, input, status) values (r, 'bench', 1, '{}', 'Running');
        insert into "sagaflow"."action_runs" (run_id, sequence, name, input, status) values (r, 1, 'a1', '{}', 'Running')
          returning id into a;
        ${insert(run('run.started', '{"flow": "bench", "version": 1}'), run('run.running', '{}'), step('action.started', '1', 'a'))}
        commit;
        for s in 2..3 loop
          perform 1 from "sagaflow"."flow_runs" where id = r for no key update;
          p := a;
          update "sagaflow"."action_runs" set status = 'Completed' where run_id = r and sequence = s - 1;
          insert into "sagaflow"."action_runs" (run_id, sequence, name, input, status) values (r, s, 'a' || s, '{}', 'Running')
            returning id into a;
          ${insert(step('action.completed', 's - 1', 'p'), step('action.started', 's', 'a'))}
          commit;
        end loop;
        perform 1 from "sagaflow"."flow_runs" where id = r for update;
        update "sagaflow"."action_runs" set status = 'Completed' where run_id = r and sequence = 3;
        update "sagaflow"."flow_runs" set status = 'Completed', finished_at = now() where id = r;
        ${insert(step('action.completed', '3', 'a'), run('run.completed', '{"output": null}'))}
        commit;
      end loop;
    end $$`;
}

await main();
