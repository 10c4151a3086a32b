import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** Every setting the service reads from the environment; `process.env` is read here and in main.ts only. */
const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  SIGNUPS_DATA_DIR: z
    .string()
    .min(1)
    .default(fileURLToPath(new URL('../.data/pglite', import.meta.url))),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65_535).default(4100),
  SIGNUP_VERIFY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(86_400),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

export type ServiceEnv = z.output<typeof schema>;

/** Parses the environment once; a bad value throws a message that names the variable. */
export function parseEnv(source: Record<string, string | undefined>): ServiceEnv {
  const parsed = schema.safeParse(source);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(`invalid setting ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
}
