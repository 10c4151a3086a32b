import pg from 'pg';

/** A transaction of the test's own, on a connection of its own, holding rows until its rollback. */
export interface HeldStepRows {
  pid: number;
  rollback: () => Promise<void>;
}

/**
 * Opens a connection to `url`, begins, and locks the rows of `table` with these ids with `mode` (as an
 * operator's psql `select … for update`, or a host's or a frozen process's open transaction that wrote
 * the row) until its rollback.
 */
export async function holdRowsOf(
  url: string,
  table: 'action_runs' | 'compensation_runs' | 'flow_runs',
  ids: string[],
  mode: 'update' | 'no key update' = 'update',
): Promise<HeldStepRows> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  await client.query('begin');
  for (const id of ids) await client.query(`select id from sagaflow.${table} where id = $1 for ${mode}`, [id]);
  let ended: Promise<void> | null = null;
  return {
    pid,
    rollback: () =>
      (ended ??= (async () => {
        try {
          await client.query('rollback');
        } finally {
          await client.end();
        }
      })()),
  };
}
