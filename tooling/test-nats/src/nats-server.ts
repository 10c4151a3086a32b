/** A running throwaway nats-server with JetStream enabled, on 127.0.0.1 without auth. */
export interface NatsServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** `nats://127.0.0.1:PORT`: hand it to `connect({ servers })`. */
  readonly url: string;
  /** The server's own pid (not runuser's). */
  readonly pid: number;
  /** The account it runs as: `nats`/`nobody` when the tests run as root, else the current user. */
  readonly user: string;
  /** JetStream's store directory; deleted by {@link NatsServer.stop}. */
  readonly storeDir: string;
  /** Everything the server printed so far (it logs to stderr). */
  output(): string;
  /** SIGTERM (SIGKILL after a grace), wait for exit, delete the store. Idempotent. */
  stop(): Promise<void>;
}

export interface StartNatsServerOptions {
  /** Path of the binary; defaults to the first of /usr/sbin/nats-server, /usr/bin/nats-server. */
  readonly binary?: string;
  /** Progress and diagnostics. Silent by default. */
  readonly log?: (line: string) => void;
  /** How long to wait for "Server is ready". Default 30 s (a loaded 2-core box is slow). */
  readonly readyTimeoutMs?: number;
}
