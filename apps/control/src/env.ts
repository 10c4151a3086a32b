import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEngineConfig, type EngineConfigInput } from '@sagaflow/engine';
import { z } from 'zod';
import { authSettings } from './auth/auth-settings.ts';
import { parseListenAddress, type ListenAddress } from './metrics/metrics-address.ts';

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
  /** A repair waiting for a second operator expires this long after it was drafted (ADR 0020). */
  SAGAFLOW_APPROVAL_EXPIRE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(366 * 86_400)
    .default(86_400),
  /** Where the outbox publishes, as JSON: route name → a webhook or a NATS JetStream subject. */
  SAGAFLOW_OUTBOX_ROUTES: z.string().default('{}'),
  /** The NATS server for `nats` outbox routes. */
  SAGAFLOW_NATS_URL: z.url({ protocol: /^(nats|tls)$/ }).optional(),
  /** The engine's settings as JSON (reclaim, repair, monitor, ...): see packages/engine/README.md. */
  SAGAFLOW_ENGINE_CONFIG: z.string().default('{}'),
  /** The largest API request body, in bytes; a bigger one is refused with 413. */
  SAGAFLOW_API_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1_048_576)
    .default(1_048_576),
  /** The most calls one batched API request may hold; a longer batch is refused with 400. */
  SAGAFLOW_API_MAX_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(20),
  /**
   * The most history downloads (/history/runs/<id>, /history/instances/<id>) one control plane streams
   * at once; another is answered 503 with Retry-After. Each holds a page of at most a few MB while its
   * client reads (ADR 0115, review 45).
   */
  SAGAFLOW_HISTORY_DOWNLOADS_MAX: z.coerce.number().int().min(1).max(1000).default(32),
  /** How long a download's client may read nothing before the download is closed and its slot freed. */
  SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** Sign-in, sessions and the API's defences (ADR 0015). */
  ...authSettings,
  /**
   * The Bearer token a scrape of /metrics must send (at least 16 visible characters). Without it and
   * without SAGAFLOW_METRICS_ADDRESS, /metrics is off (ADR 0017).
   */
  SAGAFLOW_METRICS_TOKEN: z
    .string()
    .regex(
      /^[\x21-\x7e]{16,}$/,
      'must be at least 16 visible ASCII characters (no spaces), e.g. from `openssl rand -hex 32`',
    )
    .optional(),
  /** Serve /metrics on its own listener, `host:port`, instead of the API port (ADR 0017). */
  SAGAFLOW_METRICS_ADDRESS: z
    .string()
    .transform((v, ctx): ListenAddress => {
      const address = parseListenAddress(v);
      if (!address) {
        ctx.addIssue({ code: 'custom', message: 'must be host:port, e.g. 127.0.0.1:9464 or [::1]:9464' });
        return z.NEVER;
      }
      return address;
    })
    .optional(),
  /** The longest one scrape's database reads may take; past it the scrape is a 503. */
  SAGAFLOW_METRICS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /**
   * How old the runs-by-flow-and-status figures of a scrape may be: counting every run (terminal ones
   * included) reads the whole table, so a scrape reuses the last count while it is younger (ADR 0036).
   */
  SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** The longest /readyz waits for the database to answer; past it the probe is a 503. */
  SAGAFLOW_READY_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2000),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** `auto`: human-readable lines on a terminal (not in production), JSON lines otherwise. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** Only `production` is read: it keeps `LOG_FORMAT=auto` on JSON even on a terminal. */
  NODE_ENV: z.string().optional(),
});

/** One outbox route: a signed webhook, or a NATS JetStream subject (a stream must capture it). */
const outboxRoute = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('webhook'),
      url: z.url({ protocol: /^https?$/ }),
      /** The HMAC key the receiver verifies with; at least 16 characters. */
      secret: z.string().min(16),
      timeout_ms: z.number().int().min(100).max(120_000).optional(),
    })
    .strict(),
  z.object({ kind: z.literal('nats'), subject: z.string().min(1).optional() }).strict(),
]);
const outboxRoutes = z.record(z.string().min(1), outboxRoute);
export type OutboxRouteConfig = z.output<typeof outboxRoute>;

export type ControlEnv = Omit<z.output<typeof schema>, 'SAGAFLOW_ENGINE_CONFIG' | 'SAGAFLOW_OUTBOX_ROUTES'> & {
  SAGAFLOW_DATA_DIR: string;
  /** Validated at start-up: a bad key stops the process with its name. */
  engineConfig: EngineConfigInput;
  outboxRoutes: Record<string, OutboxRouteConfig>;
};

/** Parses a JSON setting; a bad value names the setting and, inside it, the key. */
function jsonSetting<T>(name: string, raw: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new Error(`invalid setting ${name}: not JSON (${err instanceof Error ? err.message : String(err)})`, {
      cause: err,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = [name, ...(issue?.path ?? []).map(String)].join('.');
    throw new Error(`invalid setting ${at}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** The settings that are numbers (zod's coerce would read a blank value as 0). */
const numericSettings = Object.entries(schema.shape)
  .filter(([, setting]) => {
    const probe = (setting as z.ZodType).safeParse('1');
    return probe.success && typeof probe.data === 'number';
  })
  .map(([name]) => name);

/**
 * A blank numeric setting (`CONTROL_PORT=` in a compose file or a .env, or a stray space) is neither
 * the default nor a number: refused naming it, rather than read as 0 (review 34).
 */
function refuseBlankNumbers(source: Record<string, string | undefined>): void {
  for (const name of numericSettings) {
    const value = source[name];
    if (value !== undefined && value.trim() === '')
      throw new Error(`invalid setting ${name}: is blank; give a number, or unset it to use the default`);
  }
}

/** Parses the environment once; on a bad value throws a message that names the variable. */
export function parseEnv(source: Record<string, string | undefined>): ControlEnv {
  refuseBlankNumbers(source);
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid setting ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
  }
  const { SAGAFLOW_ENGINE_CONFIG: rawConfig, SAGAFLOW_OUTBOX_ROUTES: rawRoutes, ...rest } = parsed.data;
  const routes = jsonSetting('SAGAFLOW_OUTBOX_ROUTES', rawRoutes, outboxRoutes);
  if (!rest.SAGAFLOW_NATS_URL && Object.values(routes).some((r) => r.kind === 'nats'))
    throw new Error('invalid setting SAGAFLOW_NATS_URL: required by the nats routes in SAGAFLOW_OUTBOX_ROUTES');
  let engineConfig: EngineConfigInput;
  try {
    engineConfig = JSON.parse(rawConfig) as EngineConfigInput;
  } catch (err) {
    throw new Error(
      `invalid setting SAGAFLOW_ENGINE_CONFIG: not JSON (${err instanceof Error ? err.message : String(err)})`,
      { cause: err },
    );
  }
  if (typeof engineConfig !== 'object' || engineConfig === null || Array.isArray(engineConfig))
    throw new Error('invalid setting SAGAFLOW_ENGINE_CONFIG: must be a JSON object, e.g. {"repair":{"enabled":true}}');
  try {
    parseEngineConfig({
      ...engineConfig,
      worker: { concurrency: rest.SAGAFLOW_WORKER_CONCURRENCY, ...engineConfig.worker },
      approvals: { expire_after_seconds: rest.SAGAFLOW_APPROVAL_EXPIRE_SECONDS, ...engineConfig.approvals },
    });
  } catch (err) {
    throw new Error(`invalid setting SAGAFLOW_ENGINE_CONFIG: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  const dir = rest.SAGAFLOW_DATA_DIR;
  return { ...rest, SAGAFLOW_DATA_DIR: isAbsolute(dir) ? dir : resolve(dir), engineConfig, outboxRoutes: routes };
}
