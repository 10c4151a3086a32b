import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { parseEngineConfig, type EngineConfig, type EngineConfigInput } from '../runtime/engine-config.ts';
import { createSweepProgress, type SweepProgress } from '../sweeps/sweep-progress.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { OutboxTransport } from './outbox-transport.ts';

export interface OutboxPublisherOptions {
  /** The database handle the host built with createDatabase. */
  db: Pick<Database, 'prisma'>;
  /** Route name (an outbox row's `destination`) → transport. A row with no route fails and is retried. */
  routes: Readonly<Record<string, OutboxTransport>>;
  /** The engine config's `outbox` section; parsed here (defaults from engine-config.ts). */
  config?: EngineConfigInput['outbox'];
  logger?: Logger;
  /** Business time for claims, backoff and lag; the test kit passes a controllable one. */
  clock?: Clock;
  /** Names this publisher in logs. */
  publisherId?: string;
  /** Where its progress (rows done, left, rate) is kept for /metrics; the engine's `sweepProgress`, say. */
  progress?: SweepProgress;
}

/** What a publisher runs on, resolved once. */
export interface OutboxPublisherDeps {
  prisma: PrismaClient;
  routes: Readonly<Record<string, OutboxTransport>>;
  config: EngineConfig['outbox'];
  logger: Logger;
  clock: Clock;
  publisherId: string;
  progress: SweepProgress;
}

export function resolveOutboxPublisher(options: OutboxPublisherOptions): OutboxPublisherDeps {
  const publisherId = options.publisherId ?? `outbox-${randomUUID().slice(0, 8)}`;
  return {
    prisma: options.db.prisma,
    routes: checkedRoutes(options.routes),
    config: parseEngineConfig({ outbox: options.config ?? {} }).outbox,
    logger: (options.logger ?? pino({ name: 'sagaflow' })).child({ component: 'outbox', publisherId }),
    clock: options.clock ?? systemClock,
    publisherId,
    progress: options.progress ?? createSweepProgress(),
  };
}

/**
 * The routes as given, once each is a transport: refused before any row is claimed, naming the
 * route, instead of failing every row routed to it until it is Dead (review 32).
 */
function checkedRoutes(routes: unknown): Readonly<Record<string, OutboxTransport>> {
  if (typeof routes !== 'object' || routes === null || Array.isArray(routes))
    throw new EngineError('invalid_input', 'routes: must be an object of destination name → transport', {
      field: 'routes',
    });
  for (const [name, transport] of Object.entries(routes)) {
    const t = transport as Partial<OutboxTransport> | null;
    if (typeof t !== 'object' || t === null || typeof t.publish !== 'function' || typeof t.kind !== 'string')
      throw new EngineError(
        'invalid_input',
        `routes.${name}: must be a transport (an object with a kind and a publish function), such as webhookTransport(...)`,
        { field: `routes.${name}` },
      );
  }
  return routes as Readonly<Record<string, OutboxTransport>>;
}
