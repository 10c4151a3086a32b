import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { migrationStatus, type Database } from '@sagaflow/engine';
import type { Logger } from 'pino';

export interface ReadinessDeps {
  db: Pick<Database, 'driver'>;
  logger: Logger;
  /** The longest the database may take to answer (SAGAFLOW_READY_TIMEOUT_MS). */
  timeoutMs: number;
  /** True once the workers, monitor, timeout scheduler and outbox publisher run; false again while stopping. */
  started: () => boolean;
}

export type Readiness =
  { ready: true; checks: { started: true; database: 'ok'; migrations: string } } | { ready: false; reason: string };

class ProbeTimeout extends Error {}

/**
 * Readiness, unlike /healthz's liveness: this process should get traffic only when its loops run,
 * the database answers within the bound, and it holds exactly the migrations this code ships. The
 * reason names what is missing and what to do; database errors are logged, not returned (they can
 * hold a host name or a user).
 */
export async function checkReadiness(deps: ReadinessDeps): Promise<Readiness> {
  if (!deps.started())
    return { ready: false, reason: 'the control plane is starting or stopping: its workers are not running' };
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout()), deps.timeoutMs);
  });
  try {
    const status = await Promise.race([migrationStatus(deps.db), bound]);
    if (status.current)
      return {
        ready: true,
        checks: { started: true, database: 'ok', migrations: `${status.applied} applied, none pending` },
      };
    if (status.problem) return { ready: false, reason: `${status.problem.code}: ${status.problem.message}` };
    return {
      ready: false,
      reason: `migrations pending: ${status.pending.join(', ')}; restart the control plane (it migrates at start) or run the migrations`,
    };
  } catch (err) {
    if (err instanceof ProbeTimeout)
      return {
        ready: false,
        reason: `the database did not answer within ${deps.timeoutMs} ms (SAGAFLOW_READY_TIMEOUT_MS)`,
      };
    const errorId = randomUUID();
    deps.logger.warn({ err, errorId }, 'readiness: the database query failed');
    return { ready: false, reason: `the database query failed; the log has the error under id ${errorId}` };
  } finally {
    clearTimeout(timer);
  }
}

/** GET /readyz: 200 `{status: "ready", checks}`, or 503 `{status: "not_ready", reason}`. */
export function createReadyzHandler(deps: ReadinessDeps) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    void checkReadiness(deps).then((r) => {
      res.writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(
        JSON.stringify(r.ready ? { status: 'ready', checks: r.checks } : { status: 'not_ready', reason: r.reason }),
      );
    });
  };
}
