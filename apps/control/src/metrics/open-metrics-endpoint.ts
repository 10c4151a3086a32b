import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Database, SweepFigures } from '@sagaflow/engine';
import type { Logger } from 'pino';
import type { ControlEnv } from '../env.ts';
import { portUnavailable } from '../http/port-unavailable.ts';
import { createMetricsHandler, metricsOffHandler } from './create-metrics-handler.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface MetricsEndpoint {
  /** What /metrics on the API port answers: the figures (token required), or why they are not there. */
  readonly apiRoute: Handler;
  /** Starts the listener on SAGAFLOW_METRICS_ADDRESS, when set; resolves to its URL (null when unset). */
  listen(): Promise<string | null>;
  close(): Promise<void>;
}

const isMetricsPath = (url: string | undefined) => url === '/metrics' || (url ?? '').startsWith('/metrics?');

/**
 * Where /metrics is served, by ADR 0017: on SAGAFLOW_METRICS_ADDRESS when set (a listener of its own,
 * open to whoever can reach that address unless a token is set too); otherwise on the API port only
 * with SAGAFLOW_METRICS_TOKEN; with neither it is off, and says how to turn it on.
 */
export function openMetricsEndpoint(
  env: Pick<
    ControlEnv,
    | 'SAGAFLOW_METRICS_TOKEN'
    | 'SAGAFLOW_METRICS_ADDRESS'
    | 'SAGAFLOW_METRICS_TIMEOUT_MS'
    | 'SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS'
  >,
  deps: { db: Pick<Database, 'prisma'>; logger: Logger; sweeps?: () => SweepFigures[] },
): MetricsEndpoint {
  const handler = () =>
    createMetricsHandler({
      db: deps.db,
      logger: deps.logger.child({ component: 'metrics' }),
      token: env.SAGAFLOW_METRICS_TOKEN,
      timeoutMs: env.SAGAFLOW_METRICS_TIMEOUT_MS,
      runCountsMaxAgeMs: env.SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS,
      ...(deps.sweeps ? { sweeps: deps.sweeps } : {}),
    });
  const address = env.SAGAFLOW_METRICS_ADDRESS;
  if (!address) {
    return {
      apiRoute:
        env.SAGAFLOW_METRICS_TOKEN === undefined
          ? metricsOffHandler(
              '/metrics is off: set SAGAFLOW_METRICS_TOKEN (scrapes send it as a Bearer token) or SAGAFLOW_METRICS_ADDRESS (a listener of its own); see the README',
            )
          : handler(),
      listen: () => Promise.resolve(null),
      close: () => Promise.resolve(),
    };
  }
  let server: Server | null = null;
  return {
    apiRoute: metricsOffHandler(
      `/metrics is served on SAGAFLOW_METRICS_ADDRESS (${address.host}:${address.port}), not on the API port`,
    ),
    async listen() {
      const serve = handler();
      const s = createServer((req, res) => {
        if (isMetricsPath(req.url)) return serve(req, res);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'this listener serves /metrics only' }));
      });
      await new Promise<void>((resolve, reject) => {
        // Taken since the check before the database: still an error naming the setting.
        s.once('error', (err: NodeJS.ErrnoException) =>
          reject(portUnavailable('SAGAFLOW_METRICS_ADDRESS', address.host, address.port, err)),
        );
        s.listen(address.port, address.host, () => resolve());
      });
      server = s;
      const { port } = s.address() as AddressInfo;
      const host = address.host.includes(':') ? `[${address.host}]` : address.host;
      return `http://${host}:${port}/metrics`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
