import { parseArgs } from 'node:util';
import { measureBackendArms, parseRounds } from './measure-backend-arms.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:fk-checks [flows per round] [rounds]`: what the foreign keys
 * from the run's child tables to flow_runs cost one backend's CPU per flow (ADR 0068), apart from the
 * machine's load and the commits' flushes. Two databases of one throwaway cluster, migrated alike, one
 * then without those foreign keys; one connection each (synchronous_commit off: the flush is not
 * what is measured). Each round writes `flows` 3-step flows' rows on both, in alternating order, as
 * the hot path writes them (start: the run, step 1, three events; two transitions: the run locked for
 * no key update, the step closed, the next one, two events; the finish: the run locked for update and
 * finished, two events), one transaction per statement group, from a server-side loop so the client
 * adds nothing; the backend's CPU is read from /proc/<pid>/schedstat around each round.
 */
async function main(): Promise<void> {
  const { positionals } = parseArgs({ allowPositionals: true, args: process.argv.slice(2).filter((a) => a !== '--') });
  const { flows, rounds } = parseRounds(positionals);
  await measureBackendArms(
    [
      { name: 'with the foreign keys', template: 'fk_kept', options: {}, writeFlows },
      { name: 'without them', template: 'fk_dropped', options: { withoutRunForeignKeys: true }, writeFlows },
    ],
    flows,
    rounds,
  );
}

/** `flows` 3-step flows' rows, one transaction per hot statement: 3 step rows and 9 events, 12 checks with the foreign keys. */
function writeFlows(flows: number): string {
  return `do $$
    declare r uuid;
    begin
      for i in 1..${flows} loop
        r := gen_random_uuid();
        insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, input, status) values (r, 'bench', 1, '{}', 'Running');
        insert into "sagaflow"."action_runs" (run_id, sequence, name, input, status) values (r, 1, 'a1', '{}', 'Running');
        insert into "sagaflow"."flow_events" (run_id, type) values (r, 'run.started'), (r, 'run.running'), (r, 'action.started');
        commit;
        for s in 2..3 loop
          perform 1 from "sagaflow"."flow_runs" where id = r for no key update;
          update "sagaflow"."action_runs" set status = 'Completed' where run_id = r and sequence = s - 1;
          insert into "sagaflow"."action_runs" (run_id, sequence, name, input, status) values (r, s, 'a' || s, '{}', 'Running');
          insert into "sagaflow"."flow_events" (run_id, type) values (r, 'action.completed'), (r, 'action.started');
          commit;
        end loop;
        perform 1 from "sagaflow"."flow_runs" where id = r for update;
        update "sagaflow"."action_runs" set status = 'Completed' where run_id = r and sequence = 3;
        update "sagaflow"."flow_runs" set status = 'Completed', finished_at = now() where id = r;
        insert into "sagaflow"."flow_events" (run_id, type) values (r, 'action.completed'), (r, 'run.completed');
        commit;
      end loop;
    end $$`;
}

await main();
