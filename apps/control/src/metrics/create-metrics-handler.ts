import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database, SweepFigures } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { createMetricsRegistry } from './create-metrics-registry.ts';
import { readMetricsSnapshot, type CountedRuns } from './read-metrics-snapshot.ts';

export interface MetricsHandlerDeps {
  db: Pick<Database, 'prisma'>;
  logger: Logger;
  /** When set, a scrape must send `Authorization: Bearer <token>` (SAGAFLOW_METRICS_TOKEN). */
  token: string | undefined;
  /** The bound on one scrape's database reads (SAGAFLOW_METRICS_TIMEOUT_MS). */
  timeoutMs: number;
  /** How old a scrape's run counts may be (SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS); 0 reads them every scrape. */
  runCountsMaxAgeMs?: number;
  now?: () => Date;
  /** The sweeps' progress in this process (engine.sweepProgress.figures). */
  sweeps?: () => SweepFigures[];
}

/** How old a finished step must be before a scrape counts it (its commit has surely landed by then). */
export const stepSettleMs = 5000;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Compares in constant time whatever the lengths (both sides are hashed first). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer ([^\s]+)$/i.exec(header ?? '');
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), digest(token));
}

function json(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * GET /metrics: Prometheus text, read from the tables at scrape time, but for the runs by flow and
 * status, which are reused while younger than `runCountsMaxAgeMs` (their age is a gauge of its own).
 * Scrapes that arrive while one is being read share its answer, so a burst of scrapers costs the
 * database one read. A read that fails
 * or passes the bound is a 503 whose body names an id the log has the detail under.
 */
export function createMetricsHandler(deps: MetricsHandlerDeps) {
  const now = deps.now ?? (() => new Date());
  const metrics = createMetricsRegistry({ startedAt: now(), ...(deps.sweeps ? { sweeps: deps.sweeps } : {}) });
  let inFlight: Promise<string> | null = null;
  let counted: CountedRuns | undefined;
  const scrape = () =>
    (inFlight ??= readMetricsSnapshot(deps.db, {
      timeoutMs: deps.timeoutMs,
      now,
      steps: { after: metrics.steps.countedUntil, settleMs: stepSettleMs },
      runs: { last: counted, maxAgeMs: deps.runCountsMaxAgeMs ?? 0 },
    })
      .then((s) => {
        counted = s.runs;
        return metrics.render(s);
      })
      .finally(() => (inFlight = null)));

  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      json(
        res,
        405,
        { error: `${req.method ?? '?'} is not allowed on /metrics; scrape it with GET` },
        { allow: 'GET, HEAD' },
      );
      return;
    }
    if (deps.token !== undefined && !bearerMatches(req.headers.authorization, deps.token)) {
      json(
        res,
        401,
        { error: 'metrics need the scrape token: send Authorization: Bearer <SAGAFLOW_METRICS_TOKEN>' },
        { 'www-authenticate': 'Bearer realm="sagaflow-metrics"' },
      );
      return;
    }
    scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        const errorId = randomUUID();
        deps.logger.error({ err, errorId }, 'metrics: reading the figures failed');
        json(res, 503, {
          error: `the metrics could not be read from the database within ${deps.timeoutMs} ms (SAGAFLOW_METRICS_TIMEOUT_MS); the log has the error under id ${errorId}`,
        });
      },
    );
  };
}

/** /metrics where it is not served: says how to turn it on, and never answers figures. */
export function metricsOffHandler(reason: string) {
  return (_req: IncomingMessage, res: ServerResponse): void => json(res, 404, { error: reason });
}
