import { z } from 'zod';

/**
 * The CLI's own settings (the commands that talk to a running control plane): where it is and the
 * operator API token to use. Without SAGAFLOW_URL the CLI calls the local control plane, at
 * CONTROL_HOST:CONTROL_PORT (a wildcard host is reached on 127.0.0.1).
 */
const schema = z.object({
  SAGAFLOW_URL: z
    .url({ protocol: /^https?$/, error: 'must be the control plane http(s) URL, e.g. http://127.0.0.1:4000' })
    .optional(),
  SAGAFLOW_TOKEN: z.string().trim().optional(),
  CONTROL_HOST: z.string().min(1).default('127.0.0.1'),
  CONTROL_PORT: z.coerce.number().int().min(1).max(65_535).default(4000),
  SAGAFLOW_TIMEOUT_SECONDS: z.coerce
    .number({ error: 'must be a whole number of seconds, e.g. 30' })
    .int({ error: 'must be a whole number of seconds, e.g. 30' })
    .min(1, { error: 'must be at least 1 second' })
    .max(3_600, { error: 'must be at most 3600 seconds' })
    .default(30),
});

export interface CliSettings {
  /** The control plane's base URL, without a trailing slash. */
  url: string;
  /** The API token, or null when SAGAFLOW_TOKEN is unset or empty. */
  token: string | null;
  /** How long one call may take, its answer's body included (SAGAFLOW_TIMEOUT_SECONDS, default 30 s). */
  timeoutMs: number;
}

const wildcard = new Set(['0.0.0.0', '::', '[::]']);

/**
 * A SAGAFLOW_URL with a user name or password (`https://user:secret@host`) is refused before anything is
 * sent (review 36): `fetch` refuses such a URL, so every call would fail as "cannot reach", and an error
 * naming the URL would print the password. The message shows the URL with its password masked.
 */
function refuseCredentials(url: string): void {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return;
  throw new Error(
    `invalid setting SAGAFLOW_URL: ${maskUrl(url)} holds a user name or password, which the CLI does not send; ` +
      'set SAGAFLOW_URL to the address alone and authenticate with an operator API token in SAGAFLOW_TOKEN',
  );
}

/** The URL with its password (if any) replaced by `***`, as the engine prints DATABASE_URL. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === '') return url;
    u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

export function parseCliSettings(source: Record<string, string | undefined>): CliSettings {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid setting ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
  }
  const s = parsed.data;
  if (s.SAGAFLOW_URL !== undefined) refuseCredentials(s.SAGAFLOW_URL);
  const host = wildcard.has(s.CONTROL_HOST) ? '127.0.0.1' : s.CONTROL_HOST;
  const url =
    s.SAGAFLOW_URL ?? `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${s.CONTROL_PORT}`;
  return {
    url: url.replace(/\/+$/, ''),
    token: s.SAGAFLOW_TOKEN ? s.SAGAFLOW_TOKEN : null,
    timeoutMs: s.SAGAFLOW_TIMEOUT_SECONDS * 1000,
  };
}
