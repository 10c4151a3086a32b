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
}

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
  await checkPortFree(env.CONTROL_HOST, env.CONTROL_PORT);
  const metricsAt = env.SAGAFLOW_METRICS_ADDRESS;
  if (metricsAt) await checkPortFree(metricsAt.host, metricsAt.port, 'SAGAFLOW_METRICS_ADDRESS');
  const db = await openDatabase(env);
  logger.info({ database: db.description, kind: db.kind }, 'database open');
  try {
    // Each step at debug; the summary (which migrations it applied) at info, one line on a fresh start.
    const result = await migrate(db, { log: (e) => logger.debug(e, 'migration') });
    logger.info(result, 'migrations up to date');
  } catch (err) {
    await db.close();
    throw err;
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
  const engine = createControlEngine(db, env, logger);
  let ready = false;
  const metrics = openMetricsEndpoint(env, { db, logger, sweeps: () => engine.sweepProgress.figures() });
  const readyz = createReadyzHandler({ db, logger, timeoutMs: env.SAGAFLOW_READY_TIMEOUT_MS, started: () => ready });
  const history = createHistoryRoute({ db, auth, logger });
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
      reject(portUnavailable('CONTROL_PORT', env.CONTROL_HOST, env.CONTROL_PORT, err)),
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
        await publisher.stop();
        await configured.close();
        await engine.processes.stopTimeoutScheduler();
        await stopBulkResumer();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await metrics.close();
        await engine.stopMonitor();
        await engine.retention.stop();
        const { drained } = await engine.stopWorkers(10_000);
        if (!drained)
          logger.warn('in-flight jobs did not finish within 10 s; they will be redelivered after their lease');
        await db.close();
        logger.info('control plane stopped');
      })()),
  };
}

const combine =
  (...stops: (() => void)[]) =>
  () => {
    for (const stop of stops) stop();
  };
