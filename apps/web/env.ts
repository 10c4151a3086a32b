import { z } from 'zod';

/**
 * Every setting the web server reads; `process.env` is read here only. Parsed on first use (at
 * request time, not at build time), so one build runs against any control plane.
 */
const schema = z.object({
  CONTROL_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:4000'),
  /**
   * Host names (no port) the console answers to; a request naming another Host is refused with 403
   * (DNS rebinding: a page on another site that resolves its name to this server).
   */
  CONSOLE_ALLOWED_HOSTS: z
    .string()
    .default('127.0.0.1,localhost,::1')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter((s) => s.length > 0)
        .map((s) => (s.includes(':') && !s.startsWith('[') ? `[${s}]` : s)),
    ),
});

export type WebEnv = z.output<typeof schema>;

let parsed: WebEnv | undefined;

/** The validated settings; throws a message naming the bad variable. */
export function webEnv(): WebEnv {
  if (parsed) return parsed;
  const result = schema.safeParse({
    CONTROL_URL: process.env.CONTROL_URL || undefined,
    CONSOLE_ALLOWED_HOSTS: process.env.CONSOLE_ALLOWED_HOSTS || undefined,
  });
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`invalid setting ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
  }
  parsed = { ...result.data, CONTROL_URL: result.data.CONTROL_URL.replace(/\/+$/, '') };
  return parsed;
}
