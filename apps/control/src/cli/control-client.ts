import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../api/app-router.ts';
import { assertSendableToken } from './assert-sendable-token.ts';
import { CliError } from './cli-error.ts';
import { maskUrl } from './cli-settings.ts';
import { exitCodes, type ExitCode } from './exit-codes.ts';

export type ApiInputs = inferRouterInputs<AppRouter>;
export type ApiOutputs = inferRouterOutputs<AppRouter>;

/** How one control plane call failed, as its error body said. */
export interface ApiFailure {
  httpStatus: number;
  code: string;
  message: string;
  data: { field?: string | null; repair?: unknown } & Record<string, unknown>;
}

/**
 * The longest URL a query is sent in: Node's HTTP server refuses a request whose headers pass 16 KB
 * (431), and proxies often take less.
 */
const maxQueryUrlLength = 8_000;

/** A query changes nothing, whatever its answer; whether a mutation was done is unknown without one. */
type CallKind = 'query' | 'mutation';

/** The exit status an API failure means (see exit-codes.ts). */
export function exitCodeFor(failure: ApiFailure): ExitCode {
  const s = failure.httpStatus;
  if (s === 401 || s === 403 || s === 429) return exitCodes.unauthorised;
  if (s === 409 && failure.data.repair) return exitCodes.refused;
  if (s === 400 || s === 413 || s === 422) return exitCodes.usage;
  return exitCodes.error;
}

/**
 * A client of the control plane's tRPC API over plain HTTP (no Origin, so it is no browser): GET for
 * queries with the input in the URL, POST for mutations. It sends `Authorization: Bearer <token>`
 * when it has a token, or a session cookie (only while `token create --sign-in` creates the first
 * token). A refused call throws a CliError carrying the exit status and the control plane's message.
 */
export class ControlClient {
  constructor(
    readonly baseUrl: string,
    private readonly credential: { token: string } | { cookie: string } | null,
    /** How long one call may take, its answer's body included (SAGAFLOW_TIMEOUT_SECONDS). */
    private readonly timeoutMs = 30_000,
  ) {}

  /** The base URL as messages print it: a password in it masked (settings refuse one; this is the second guard). */
  get shownUrl(): string {
    return maskUrl(this.baseUrl);
  }

  query<T>(path: string, input?: unknown): Promise<T> {
    const url = new URL(`${this.baseUrl}/trpc/${path}`);
    if (input !== undefined) url.searchParams.set('input', JSON.stringify(input));
    // Past what a server reads of a request line (Node answers 431 at 16 KB of headers), the input goes
    // in a POST's body; the control plane takes a query so (ADR 0122 addendum).
    if (url.href.length > maxQueryUrlLength)
      return this.call<T>(path, new URL(`${this.baseUrl}/trpc/${path}`), 'query', {
        method: 'POST',
        body: JSON.stringify(input),
      });
    return this.call<T>(path, url, 'query', { method: 'GET' });
  }

  mutate<T>(path: string, input: unknown): Promise<T> {
    return this.call<T>(path, new URL(`${this.baseUrl}/trpc/${path}`), 'mutation', {
      method: 'POST',
      body: JSON.stringify(input ?? {}),
    });
  }

  /** A raw call that also returns the response headers (sign-in reads its cookie). */
  async callRaw(path: string, input: unknown): Promise<{ data: unknown; headers: Headers }> {
    const res = await this.send(
      path,
      new URL(`${this.baseUrl}/trpc/${path}`),
      { method: 'POST', body: JSON.stringify(input) },
      'mutation',
    );
    return { data: await this.unwrap(path, res, 'mutation'), headers: res.headers };
  }

  private async call<T>(path: string, url: URL, kind: CallKind, init: { method: string; body?: string }): Promise<T> {
    return (await this.unwrap(path, await this.send(path, url, init, kind), kind)) as T;
  }

  private async send(
    path: string,
    url: URL,
    init: { method: string; body?: string },
    kind: CallKind,
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (this.credential && 'token' in this.credential) {
      assertSendableToken(this.credential.token);
      headers.authorization = `Bearer ${this.credential.token}`;
    }
    if (this.credential && 'cookie' in this.credential) headers.cookie = this.credential.cookie;
    try {
      return await fetch(url, { ...init, headers, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      if (cause === 'TimeoutError')
        throw new CliError(
          exitCodes.error,
          `the control plane at ${this.shownUrl} did not answer ${path} within ${this.timeoutMs / 1000} s ` +
            '(SAGAFLOW_TIMEOUT_SECONDS, default 30)' +
            (kind === 'query'
              ? '; nothing was changed by it, run the command again'
              : '; whether it was done is unknown. If it was a repair, run it again with the same --idempotency-key: ' +
                'it will not act twice'),
        );
      throw new CliError(
        exitCodes.error,
        `cannot reach the control plane at ${this.shownUrl} (${path}: ${cause}); start it with \`npm start\`, ` +
          'or set SAGAFLOW_URL to its address. If a repair timed out, run it again with the same --idempotency-key: ' +
          'it will not act twice',
      );
    }
  }

  /**
   * The whole body. A body cut off or stalled past the timeout is reported like a call that got no answer
   * (review 36): the request was taken, so a mutation may have been done; the message says so, and a repair
   * adds the flags that repeat it under the same idempotency key (draft-repair.ts).
   */
  private async readBody(path: string, res: Response, kind: CallKind): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
      const how = timedOut
        ? `stopped arriving and was not complete after ${this.timeoutMs / 1000} s (SAGAFLOW_TIMEOUT_SECONDS)`
        : `was cut off before it was complete (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message})`;
      throw new CliError(
        exitCodes.error,
        `the answer of the control plane at ${this.shownUrl} to ${path} ${how}` +
          (kind === 'query'
            ? '; nothing was changed by it, run the command again'
            : '; whether it was done is unknown. If it was a repair, run it again with the same --idempotency-key: ' +
              'it will not act twice'),
      );
    }
  }

  private async unwrap(path: string, res: Response, kind: CallKind): Promise<unknown> {
    const text = await this.readBody(path, res, kind);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new CliError(
        exitCodes.error,
        `the control plane at ${this.shownUrl} answered ${path} with ${res.status} and no JSON; is SAGAFLOW_URL its address?`,
      );
    }
    const b = isObject(body) ? body : {};
    if (res.ok && isObject(b.result)) return b.result.data;
    // A 2xx answer that is not a tRPC result (`null`, a number, `{}`) is no answer this client can read.
    if (res.ok)
      throw new CliError(
        exitCodes.error,
        `the control plane at ${this.shownUrl} answered ${path} with ${res.status} and JSON that is not a tRPC ` +
          `answer${kind === 'query' ? '' : ' (whether it was done is unknown)'}; is SAGAFLOW_URL its address?`,
      );
    // A failure status says what it means (exit-codes.ts) whatever its body; a tRPC error body says more.
    const error = isObject(b.error) ? b.error : {};
    const data = isObject(error.data) ? error.data : {};
    const failure: ApiFailure = {
      httpStatus: typeof data.httpStatus === 'number' ? data.httpStatus : res.status,
      code: typeof data.code === 'string' ? data.code : String(res.status),
      message:
        typeof error.message === 'string'
          ? error.message
          : typeof b.error === 'string'
            ? b.error
            : `the control plane at ${this.shownUrl} answered ${path} with HTTP ${res.status}`,
      data,
    };
    throw new CliError(exitCodeFor(failure), failure.message, { error: failure });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
