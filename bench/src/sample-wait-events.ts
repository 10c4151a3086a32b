import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** What the server's backends of one database were doing while busy with a statement, sampled. */
export interface WaitEventSamples {
  readonly samples: number;
  /** Backends found active (running a statement or its commit), summed over the samples. */
  readonly active: number;
  /** Of `active`, by wait event (`LWLock:WALWrite`, `IO:WALSync`, `Lock:transactionid`...); `CPU` when none. */
  readonly byEvent: Record<string, number>;
}

/**
 * Samples pg_stat_activity every `everyMs` on a connection of its own until `stop` is called: per
 * active backend of database `name`, its wait event at that moment. A commit waiting for its WAL flush
 * shows as `IO:WALSync` (its own flush) or `LWLock:WALWrite` (behind another backend's), a statement
 * on the CPU (or waiting for one: the kernel's run queue is invisible here) as no wait at all. Each
 * sample is one short query on the server, a cost the report states.
 */
export async function sampleWaitEvents(
  adminUrl: string,
  name: string,
  everyMs: number,
): Promise<{ stop: () => Promise<WaitEventSamples> }> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const byEvent: Record<string, number> = {};
  let samples = 0;
  let active = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ event: string }>({
        name: 'sample-wait-events',
        text: `select coalesce(wait_event_type || ':' || wait_event, 'CPU') as event from pg_stat_activity
                where datname = $1 and backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()`,
        values: [name],
      });
      samples += 1;
      for (const { event } of rows) {
        active += 1;
        byEvent[event] = (byEvent[event] ?? 0) + 1;
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      return { samples, active, byEvent };
    },
  };
}
