import { terminalRunStatuses } from '@sagaflow/engine';
import pg from 'pg';

/** A run's times as the engine recorded them, in epoch milliseconds. */
export interface RunTimes {
  readonly id: string;
  readonly createdMs: number;
  readonly finishedMs: number;
}

/**
 * The bench's own connection to a phase's database, as the observer role. It counts its queries: each
 * is one implicit transaction, which is subtracted from the database's commit counter.
 */
export class RunObserver {
  queries = 0;

  private constructor(readonly client: pg.Client) {}

  static async open(url: string): Promise<RunObserver> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new RunObserver(client);
  }

  /** How many runs are finished, how many of those did not complete, and how many are Running now. */
  async countFinished(): Promise<{ finished: number; notCompleted: number; running: number }> {
    const rows = await this.query<{ finished: number; not_completed: number; running: number }>(
      `select count(*) filter (where status = any($1))::int as finished,
              count(*) filter (where status = any($1) and status <> 'Completed')::int as not_completed,
              count(*) filter (where status = 'Running')::int as running
         from "sagaflow"."flow_runs"`,
      [terminalRunStatuses],
    );
    const row = rows[0];
    return { finished: row?.finished ?? 0, notCompleted: row?.not_completed ?? 0, running: row?.running ?? 0 };
  }

  /** The run's status, or null if it does not exist. */
  async runStatus(runId: string): Promise<string | null> {
    const rows = await this.query<{ status: string }>(`select status from "sagaflow"."flow_runs" where id = $1`, [
      runId,
    ]);
    return rows[0]?.status ?? null;
  }

  /**
   * The engine's sessions on this database right now, by state ('active', 'idle in transaction',
   * 'idle'), an active session's wait event appended (`active, waiting Lock:transactionid`).
   */
  async sampleSessions(): Promise<Map<string, number>> {
    const rows = await this.query<{ state: string | null; wait: string | null; n: number }>(
      `select state, case when state = 'active' and wait_event_type is not null
                          then wait_event_type || ':' || wait_event end as wait, count(*)::int as n
         from pg_stat_activity
        where datname = current_database() and usename <> current_user and backend_type = 'client backend'
        group by 1, 2`,
    );
    return new Map(rows.map((r) => [`${r.state ?? 'unknown'}${r.wait === null ? '' : `, waiting ${r.wait}`}`, r.n]));
  }

  /** Why runs did not complete: statuses, stuck reasons and errors, for an error message. */
  async describeUnfinished(): Promise<string> {
    const rows = await this.query<{ status: string; stuck_reason: string | null; error: unknown; n: number }>(
      `select status, stuck_reason, error, count(*)::int as n from "sagaflow"."flow_runs"
        where status <> 'Completed' group by 1, 2, 3 order by n desc limit 5`,
    );
    return rows.map((r) => `${r.n}× ${r.status} ${r.stuck_reason ?? ''} ${JSON.stringify(r.error)}`).join('; ');
  }

  /** created_at and finished_at of every completed run. */
  async completedRunTimes(): Promise<RunTimes[]> {
    const rows = await this.query<{ id: string; created_ms: number; finished_ms: number }>(
      `select id::text, extract(epoch from created_at)::float8 * 1000 as created_ms,
              extract(epoch from finished_at)::float8 * 1000 as finished_ms
         from "sagaflow"."flow_runs" where status = 'Completed' and finished_at is not null`,
    );
    return rows.map((r) => ({ id: r.id, createdMs: r.created_ms, finishedMs: r.finished_ms }));
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  private async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    this.queries += 1;
    return (await this.client.query<T>(sql, params)).rows;
  }
}
