import type { Logger } from 'pino';
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { Anomaly } from '../store/insert-anomaly.ts';
import type { EngineConfig } from './engine-config.ts';
import type { Registry } from './registry.ts';

/** What the runtime's operations need, built once by createEngine. */
export interface RuntimeDeps {
  prisma: PrismaClient;
  registry: Registry;
  config: EngineConfig;
  logger: Logger;
  workerId: string;
  journal: (anomaly: Anomaly) => Promise<void>;
  /** Tells local workers there is work now, so they need not wait for their next poll. */
  nudge: () => void;
}
