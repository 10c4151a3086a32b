import type { ControlEnv } from '../env.ts';
import { hostNames } from '../http/host-allowed.ts';

const wildcardAddresses = new Set(['0.0.0.0', '::', '[::]']);

/** What the sign-in, session and Origin checks need, from the environment plus the clock. */
export interface AuthOptions {
  idleSeconds: number;
  absoluteSeconds: number;
  signInWindowSeconds: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  allowedOrigins: ReadonlySet<string>;
  /** Host names the API answers to (see hostAllowed). */
  allowedHosts: ReadonlySet<string>;
  trustedProxies: ReadonlySet<string>;
  cookieSecure: boolean;
  /** The clock sessions and the rate limit are measured by; tests pass their own. */
  now: () => Date;
}

export function authOptionsFrom(env: ControlEnv, now: () => Date = () => new Date()): AuthOptions {
  return {
    idleSeconds: env.SAGAFLOW_SESSION_IDLE_SECONDS,
    absoluteSeconds: env.SAGAFLOW_SESSION_ABSOLUTE_SECONDS,
    signInWindowSeconds: env.SAGAFLOW_SIGNIN_WINDOW_SECONDS,
    maxFailuresPerAccount: env.SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT,
    maxFailuresPerAddress: env.SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS,
    allowedOrigins: new Set(env.SAGAFLOW_ALLOWED_ORIGINS.map((o) => o.replace(/\/+$/, ''))),
    allowedHosts: hostNames([
      ...env.SAGAFLOW_ALLOWED_HOSTS,
      ...(wildcardAddresses.has(env.CONTROL_HOST) ? [] : [env.CONTROL_HOST]),
    ]),
    trustedProxies: new Set(env.SAGAFLOW_TRUSTED_PROXIES),
    cookieSecure: env.SAGAFLOW_COOKIE_SECURE,
    now,
  };
}
