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

  /** How many runs are finished, and how many of those did not complete. */
  async countFinished(): Promise<{ finished: number; notCompleted: number }> {
    const rows = await this.query<{ finished: number; not_completed: number }>(
      `select count(*)::int as finished, count(*) filter (where status <> 'Completed')::int as not_completed
         from "sagaflow"."flow_runs" where status = any($1)`,
      [terminalRunStatuses],
    );
    return { finished: rows[0]?.finished ?? 0, notCompleted: rows[0]?.not_completed ?? 0 };
  }

  /** The run's status, or null if it does not exist. */
  async runStatus(runId: string): Promise<string | null> {
    const rows = await this.query<{ status: string }>(`select status from "sagaflow"."flow_runs" where id = $1`, [
      runId,
    ]);
    return rows[0]?.status ?? null;
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
