import pg from 'pg';
import { createDatabase } from '@sagaflow/test-postgres';
import type { OpenPeer, PeerSystem } from './peer-system.ts';
import { spareConnections } from './peer-system.ts';

/** The floor's schema: a run row and a row per step, no index beyond the keys. */
const schema = [
  `create table floor_runs (id bigserial primary key, input jsonb not null, status text not null,
     output jsonb, created_at timestamptz not null default now(), finished_at timestamptz)`,
  `create table floor_steps (run_id bigint not null, sequence int not null, output jsonb not null,
     primary key (run_id, sequence))`,
];

/** The four autocommitted statements of one floor "flow", each named so it is prepared once per connection. */
const start = {
  name: 'floor-start',
  text: `insert into floor_runs (input, status) values ($1, 'Running') returning id`,
};
const step = { name: 'floor-step', text: 'insert into floor_steps (run_id, sequence, output) values ($1, $2, $3)' };
const finish = {
  name: 'floor-finish',
  text: `with s as (insert into floor_steps (run_id, sequence, output) values ($1, 3, $2))
         update floor_runs set status = 'Completed', output = $2, finished_at = now() where id = $1`,
};

/**
 * Not a workflow system: the least a client pays for a 3-step flow committed the way Sagaflow commits
 * one at one client (ADR 0073), four commits one after another: the run's start, step 1's output,
 * step 2's output, step 3's output with the run's end. Each is one autocommitted statement through
 * the same driver and pool kind as Sagaflow's (node-postgres, a pg.Pool of `concurrency + 4`), so
 * each waits for its WAL flush on durable commits. No engine, no replay, no claims, no history: the
 * gap between this and Sagaflow at c=1 is the engine's own cost, and this row's Node CPU is the part
 * of Sagaflow's that any client with four durable round trips per flow pays (ADR 0090).
 */
export const floorPeer: PeerSystem = {
  name: 'Floor',
  async prepareTemplate(adminUrl, name) {
    const client = new pg.Client({ connectionString: await createDatabase(adminUrl, name) });
    await client.connect();
    try {
      for (const statement of schema) await client.query(statement);
    } finally {
      await client.end();
    }
  },
  async open(url, concurrency): Promise<OpenPeer> {
    const pool = new pg.Pool({ connectionString: url, max: concurrency + spareConnections });
    return {
      async runOne(n) {
        const input = JSON.stringify({ n });
        const run = await pool.query<{ id: string }>({ ...start, values: [input] });
        const id = run.rows[0]!.id;
        for (const sequence of [1, 2])
          await pool.query({ ...step, values: [id, sequence, JSON.stringify({ n, step: sequence })] });
        const done = await pool.query({ ...finish, values: [id, JSON.stringify({ n, step: 3 })] });
        if (done.rowCount !== 1) throw new Error(`floor run ${id} was not finished`);
      },
      close: () => pool.end(),
    };
  },
};
