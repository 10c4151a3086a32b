import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { EngineError, type Database, type Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { appRouter } from '../api/app-router.ts';
import { createApiContext } from '../api/create-api-context.ts';
import { errorIdFor } from '../api/error-ids.ts';
import type { AuthOptions } from '../auth/auth-options.ts';
import { hostAllowed } from './host-allowed.ts';

/** What one API request may ask of the server (SAGAFLOW_API_MAX_BODY_BYTES, SAGAFLOW_API_MAX_BATCH_SIZE). */
export interface ApiLimits {
  maxBodyBytes: number;
  maxBatchSize: number;
}

type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * Serves the tRPC API under /trpc and health under /healthz. Every request gets an id (the
 * `x-request-id` response header); a server-side error is logged under it, with its detail, and the
 * response names only the id (see formatApiError). Bodies and batches are bounded by tRPC's own
 * limits: a bigger body is a 413, a longer batch a 400, before any procedure runs. A Host header
 * naming another site is a 403 before anything else (DNS rebinding; SAGAFLOW_ALLOWED_HOSTS).
 */
export function createHttpServer(deps: {
  engine: Engine;
  db: Pick<Database, 'prisma'>;
  logger: Logger;
  auth: AuthOptions;
  isReady: () => boolean;
  limits: ApiLimits;
  /** GET /readyz (readyz.ts) and GET /metrics (metrics/open-metrics-endpoint.ts). */
  probes: { readyz: RouteHandler; metrics: RouteHandler };
  /** GET /history/runs/<id> and /history/instances/<id> (history/history-route.ts). */
  history: RouteHandler;
}): Server {
  const requestIds = new WeakMap<IncomingMessage, string>();
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    // A query whose input does not fit in a URL (a bulk preview of hundreds of items) is sent as a
    // POST by the CLI and the console; it is still a query: it changes nothing (ADR 0122 addendum).
    allowMethodOverride: true,
    maxBodySize: deps.limits.maxBodyBytes,
    maxBatchSize: deps.limits.maxBatchSize,
    createContext: ({ req, res }) => createApiContext(deps, req, res),
    onError: ({ error, path, req }) => {
      // A bulk a stop ended part-way was logged at warn by the engine, with how far it got (ADR 0121).
      const interrupted = error.cause instanceof EngineError && error.cause.code === 'approval_interrupted';
      if (getHTTPStatusCodeFromError(error) >= 500 && !interrupted) {
        const requestId = errorIdFor(error, requestIds.get(req));
        deps.logger.error({ err: error.cause ?? error, requestId, path }, 'api error');
      }
    },
  });
  /**
   * A route's failure is its request's, never the process's: a throw or a rejection no handler caught
   * (review 31: one malformed URL ended the control plane) is logged and answered 500 if nothing was
   * sent yet.
   */
  const guarded = (handler: RouteHandler, req: IncomingMessage, res: ServerResponse) => {
    const failed = (err: unknown) => {
      deps.logger.error({ err, url: req.url }, 'route failed');
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ error: 'internal error; see the control plane log' }));
      } else res.destroy();
    };
    try {
      void Promise.resolve(handler(req, res)).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
  return createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/healthz' || url.startsWith('/healthz?')) {
      const ready = deps.isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ready ? 'ok' : 'starting' }));
      return;
    }
    if (url === '/readyz' || url.startsWith('/readyz?')) return guarded(deps.probes.readyz, req, res);
    if (url === '/metrics' || url.startsWith('/metrics?')) return guarded(deps.probes.metrics, req, res);
    if (url.startsWith('/history/')) return guarded(deps.history, req, res);
    if (url.startsWith('/trpc/')) {
      // Every API answer may carry run data, who is signed in or a new token's secret: no cache
      // (browser or proxy) keeps it, and no browser reads it as anything but its declared type (ADR 0111).
      res.setHeader('cache-control', 'no-store');
      res.setHeader('x-content-type-options', 'nosniff');
      if (!hostAllowed(req.headers.host, deps.auth.allowedHosts)) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: `this API does not answer to host ${JSON.stringify(req.headers.host ?? '')}; add its name to SAGAFLOW_ALLOWED_HOSTS if it is yours`,
          }),
        );
        return;
      }
      const requestId = randomUUID();
      requestIds.set(req, requestId);
      res.setHeader('x-request-id', requestId);
      trpc(req, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: `no route ${url}; the API is under /trpc/, liveness under /healthz, readiness under /readyz`,
      }),
    );
  });
}
