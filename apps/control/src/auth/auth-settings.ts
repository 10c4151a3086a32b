import { z } from 'zod';

const seconds = (min: number, fallback: number) => z.coerce.number().int().min(min).max(31_536_000).default(fallback);
const list = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    );
const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

/**
 * The control plane's sign-in and session settings, as environment variables (spread into env.ts's
 * schema). Defaults: a 30-minute idle and 12-hour absolute session; 5 failed sign-ins per account and
 * 20 per address in 15 minutes; mutations accepted from the console at 127.0.0.1:3000 / localhost:3000.
 */
export const authSettings = {
  /** The first admin's password, used only when no operator exists yet; generated and printed otherwise. */
  SAGAFLOW_ADMIN_PASSWORD: z.string().min(8).max(200).optional(),
  SAGAFLOW_SESSION_IDLE_SECONDS: seconds(1, 1800),
  SAGAFLOW_SESSION_ABSOLUTE_SECONDS: seconds(1, 43_200),
  SAGAFLOW_SIGNIN_WINDOW_SECONDS: seconds(1, 900),
  SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(5),
  SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Origins (scheme://host:port) whose browsers may call mutations; others get 403. */
  SAGAFLOW_ALLOWED_ORIGINS: list('http://127.0.0.1:3000,http://localhost:3000'),
  /**
   * Host names (no port) the API answers to; any other Host header is refused with 403 before
   * anything runs (DNS rebinding). CONTROL_HOST is added unless it is a wildcard address.
   */
  SAGAFLOW_ALLOWED_HOSTS: list('127.0.0.1,localhost,::1'),
  /** Peers whose X-Forwarded-For names the client (the console's server); others are the client. */
  SAGAFLOW_TRUSTED_PROXIES: list('127.0.0.1,::1,::ffff:127.0.0.1'),
  /** Mark the session cookie Secure (set it when the console is served over HTTPS). */
  SAGAFLOW_COOKIE_SECURE: bool.default(false),
};
