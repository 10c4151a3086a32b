import type { AddressInfo } from 'node:net';
import { migrate, startOutboxPublisher, type Database, type Engine } from '@sagaflow/engine';
import { pino, type Logger } from 'pino';
import { startBulkResumer } from './approvals/start-bulk-resumer.ts';
import { createControlEngine, openDatabase } from './control-engine.ts';
import { openOutboxRoutes } from './outbox-routes.ts';
import { fulfilmentRoutes } from './demo/fulfilment-services.ts';
import { startDemoTraffic } from './demo/start-demo-traffic.ts';
import { startFulfilmentTraffic } from './demo/start-fulfilment-traffic.ts';
import type { ControlEnv } from './env.ts';
import { checkPortFree } from './http/check-port-free.ts';
import { portUnavailable } from './http/port-unavailable.ts';
import { createHttpServer } from './http/create-http-server.ts';
import { createHistoryRoute } from './history/history-route.ts';
import { authOptionsFrom } from './auth/auth-options.ts';
import { ensureFirstAdmin } from './auth/ensure-first-admin.ts';
import { createReadyzHandler } from './http/readyz.ts';
import { openMetricsEndpoint } from './metrics/open-metrics-endpoint.ts';

export interface StartOptions {
  /** The clock sessions and the sign-in limit are measured by (tests move it). */
  now?: () => Date;
  /** Where a generated first-admin password is shown, once. */
  print?: (text: string) => void;
  /**
   * Aborted by a SIGINT/SIGTERM that arrives during start-up: the start is abandoned at the next safe
   * point (a pending migration is rolled back), the database closed and its lock released, and the
   * returned promise rejects with `StartAborted`.
   */
  signal?: AbortSignal;
}

/** The rejection of a start that its `signal` abandoned: nothing was left half-done. */
export class StartAborted extends Error {
  constructor() {
    super('start-up abandoned on request');
    this.name = 'StartAborted';
  }
}

/** How long a stop lets HTTP requests in flight finish before their connections are closed. */
const httpGraceMs = 3000;
/** How long a stop lets the workers' jobs in flight finish; npm start SIGKILLs 15 s after its SIGTERM. */
const workerDrainMs = 8000;
/**
 * How long a stop lets an approved bulk in flight go on before it ends it after the item in hand
 * (ADR 0121): under the HTTP grace, so that its approver is answered (503 `approval_interrupted`,
 * saying how far it got) before the connection is closed.
 */
const bulkGraceMs = 2000;

export interface ControlPlane {
  url: string;
  /** Where /metrics is served when SAGAFLOW_METRICS_ADDRESS is set; null otherwise. */
  metricsUrl: string | null;
  engine: Engine;
  db: Database;
  stop(): Promise<void>;
}

/**
 * Starts the control plane: checks the port, opens and migrates the database, starts the engine's
 * workers and the HTTP API, and (on request) demo traffic. Checks run in the order that keeps a
 * failed start from leaving anything half-created.
 */
export async function startControlPlane(
  env: ControlEnv,
  logger: Logger = pino({ level: env.LOG_LEVEL }),
  options: StartOptions = {},
): Promise<ControlPlane> {
  const { signal } = options;
  const abortIfSignalled = () => {
    if (signal?.aborted) throw new StartAborted();
  };
  await checkPortFree(env.CONTROL_HOST, env.CONTROL_PORT);
  const metricsAt = env.SAGAFLOW_METRICS_ADDRESS;
  if (metricsAt) await checkPortFree(metricsAt.host, metricsAt.port, 'SAGAFLOW_METRICS_ADDRESS');
  abortIfSignalled();
  const db = await openDatabase(env);
  logger.info({ database: db.description, kind: db.kind }, 'database open');
  try {
    abortIfSignalled();
    // Each step at debug; the summary (which migrations it applied) at info, one line on a fresh start.
    // A migration that cannot take a lock warns with the session holding it, and retries (ADR 0123).
    const result = await migrate(db, { log: (e) => logger.debug(e, 'migration'), logger, signal });
    logger.info(result, 'migrations up to date');
    abortIfSignalled();
  } catch (err) {
    await db.close();
    const abandoned = signal?.aborted && (err === signal.reason || (err as Error | null)?.name === 'AbortError');
    throw abandoned ? new StartAborted() : err;
  }

  const auth = authOptionsFrom(env, options.now);
  try {
    const admin = await ensureFirstAdmin(db.prisma, env.SAGAFLOW_ADMIN_PASSWORD, auth.now());
    if (admin?.generatedPassword) {
      // The password goes to stdout once, never into the structured log (which may be shipped).
      logger.warn(
        { operator: admin.name },
        'first admin created with a generated password, printed once on stdout; sign in and change it',
      );
      (options.print ?? ((text) => process.stdout.write(text)))(
        `\n  First admin created. Sign in as "${admin.name}" with password: ${admin.generatedPassword}\n` +
          '  (shown once; set SAGAFLOW_ADMIN_PASSWORD before the first start to choose it)\n\n',
      );
    } else if (admin) logger.info({ operator: admin.name }, 'first admin created with SAGAFLOW_ADMIN_PASSWORD');
  } catch (err) {
    await db.close();
    throw err;
  }

  const configured = await openOutboxRoutes(env).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  if (signal?.aborted) {
    await configured.close();
    await db.close();
    throw new StartAborted();
  }
  const engine = createControlEngine(db, env, logger);
  let ready = false;
  const metrics = openMetricsEndpoint(env, { db, logger, sweeps: () => engine.sweepProgress.figures() });
  const readyz = createReadyzHandler({ db, logger, timeoutMs: env.SAGAFLOW_READY_TIMEOUT_MS, started: () => ready });
  const history = createHistoryRoute({
    db,
    auth,
    logger,
    maxDownloads: env.SAGAFLOW_HISTORY_DOWNLOADS_MAX,
    stallMs: env.SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS * 1000,
  });
  const server = createHttpServer({
    engine,
    db,
    logger,
    auth,
    isReady: () => ready,
    limits: { maxBodyBytes: env.SAGAFLOW_API_MAX_BODY_BYTES, maxBatchSize: env.SAGAFLOW_API_MAX_BATCH_SIZE },
    probes: { readyz, metrics: metrics.apiRoute },
    history,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(portUnavailable('CONTROL_PORT', env.CONTROL_HOST, env.CONTROL_PORT, err, 'CONTROL_HOST')),
    );
    server.listen(env.CONTROL_PORT, env.CONTROL_HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${env.CONTROL_HOST}:${port}`;
  const metricsUrl = await metrics.listen().catch(async (err: unknown) => {
    server.close();
    await db.close();
    throw err;
  });
  engine.startWorkers();
  engine.startMonitor({ intervalMs: env.SAGAFLOW_MONITOR_INTERVAL_MS });
  // Retention is off unless configured (ADR 0027): deleting history is the operator's decision.
  if (engine.config.retention.enabled) engine.retention.start();
  // Process managers: due timeouts become messages; committed outbox rows reach their services.
  engine.processes.startTimeoutScheduler({ intervalMs: 1000 });
  const stopBulkResumer = startBulkResumer(engine, logger.child({ component: 'approvals' }));
  const services = fulfilmentRoutes(engine, logger.child({ component: 'demo-services' }));
  // Configured routes win over the demo's simulated services of the same name.
  const publisher = startOutboxPublisher({
    db,
    routes: { ...services.routes, ...configured.routes },
    config: engine.config.outbox,
    logger: logger.child({ component: 'engine' }),
    progress: engine.sweepProgress,
  });
  const stopDemo = env.SAGAFLOW_DEMO
    ? combine(
        startDemoTraffic(engine, logger, env.SAGAFLOW_DEMO_INTERVAL_MS),
        startFulfilmentTraffic(engine, logger, env.SAGAFLOW_DEMO_INTERVAL_MS),
      )
    : () => undefined;
  ready = true;
  logger.info({ url }, 'control plane listening');

  let stopping: Promise<void> | null = null;
  return {
    url,
    metricsUrl,
    engine,
    db,
    stop: () =>
      (stopping ??= (async () => {
        ready = false;
        stopDemo();
        services.stop();
        // No new work after a stop begins, and the whole stop is bounded (npm start SIGKILLs 15 s after
        // its SIGTERM): HTTP stops accepting at once, its idle connections are closed, a request in
        // flight gets a short grace and then its connection is closed (a stalled client must not hold
        // the stop). Meanwhile, not after, the workers, the monitor and the publisher stop.
        const httpStopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const stopHttp = async () => {
          if (!(await within(httpStopped, httpGraceMs))) {
            logger.warn(
              `HTTP requests still open after ${httpGraceMs / 1000} s of the stop; closing their connections`,
            );
            server.closeAllConnections();
          }
          await httpStopped;
          await metrics.close();
        };
        const stopWork = async () => {
          const drain = engine.stopWorkers(workerDrainMs).then(({ drained }) => {
            if (!drained)
              logger.warn(
                `in-flight jobs did not finish within ${workerDrainMs / 1000} s; they will be redelivered after their lease`,
              );
          });
          await Promise.all([
            drain,
            // A delivery still out gets the workers' bound, not its whole publish deadline: one left
            // unacknowledged stays claimed and is published again after its claim window (at least once).
            within(publisher.stop(), workerDrainMs).then(async (done) => {
              if (!done)
                logger.warn(
                  `outbox deliveries still out after ${workerDrainMs / 1000} s; they will be published again`,
                );
              await configured.close();
            }),
            engine.processes.stopTimeoutScheduler(),
            // Before the resumer's stop, which waits for its pass: the stop ends that pass's bulk too.
            engine.approvals.stopApplying({ graceMs: bulkGraceMs, waitMs: workerDrainMs - bulkGraceMs }),
            stopBulkResumer(),
            engine.stopMonitor(),
            engine.retention.stop(),
          ]);
        };
        await Promise.all([stopHttp(), stopWork()]);
        await db.close();
        logger.info('control plane stopped');
      })()),
  };
}

/** True if `p` settled within `ms`; false (and `p` left to settle) otherwise. */
const within = (p: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

const combine =
  (...stops: (() => void)[]) =>
  () => {
    for (const stop of stops) stop();
  };
