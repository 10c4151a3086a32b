/** A running throwaway PostgreSQL 15 cluster, reachable over TCP on 127.0.0.1 without a password. */
export interface PgCluster {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Superuser created by initdb (`sagaflow`). */
  readonly user: string;
  /** `postgresql://sagaflow@127.0.0.1:PORT/postgres`: for creating and dropping databases. */
  readonly adminUrl: string;
  /** PGDATA; `server.log` is in it. Deleted by {@link PgCluster.stop}. */
  readonly dataDir: string;
  /** Stops immediately (no checkpoint) and deletes the cluster's directories. Idempotent. */
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`: every connection is dropped; same port, same data. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: the server is down (connections refused) until {@link PgCluster.resume}; data kept. */
  pause(): Promise<void>;
  /** Starts a paused server again on the same port with the same data. */
  resume(): Promise<void>;
}

export interface StartClusterOptions {
  /** Progress and diagnostics (reaping, chosen port, retries). Silent by default. */
  readonly log?: (line: string) => void;
  /** Directory holding initdb, pg_ctl and postgres. Defaults to `/usr/lib/postgresql/15/bin`. */
  readonly binDir?: string;
}
