import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

/** Every setting the control plane reads from the environment; `process.env` is read here only. */
const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  SAGAFLOW_DATA_DIR: z
    .string()
    .min(1)
    .default(join(repoRoot, '.data', 'pglite')),
  CONTROL_HOST: z.string().min(1).default('127.0.0.1'),
  CONTROL_PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  SAGAFLOW_DEMO: bool.default(false),
  SAGAFLOW_DEMO_INTERVAL_MS: z.coerce.number().int().min(50).default(3000),
  /** How often the expiration monitor sweeps overdue steps (the lease holder among replicas does). */
  SAGAFLOW_MONITOR_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
  SAGAFLOW_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(4),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

export type ControlEnv = z.output<typeof schema> & { SAGAFLOW_DATA_DIR: string };

/** Parses the environment once; on a bad value throws a message that names the variable. */
export function parseEnv(source: Record<string, string | undefined>): ControlEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid setting ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
  }
  const dir = parsed.data.SAGAFLOW_DATA_DIR;
  return { ...parsed.data, SAGAFLOW_DATA_DIR: isAbsolute(dir) ? dir : resolve(dir) };
}
