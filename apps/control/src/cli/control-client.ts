import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../api/app-router.ts';
import { assertSendableToken } from './assert-sendable-token.ts';
import { CliError } from './cli-error.ts';
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

const requestTimeoutMs = 30_000;

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
  ) {}

  query<T>(path: string, input?: unknown): Promise<T> {
    const url = new URL(`${this.baseUrl}/trpc/${path}`);
    if (input !== undefined) url.searchParams.set('input', JSON.stringify(input));
    return this.call<T>(path, url, { method: 'GET' });
  }

  mutate<T>(path: string, input: unknown): Promise<T> {
    return this.call<T>(path, new URL(`${this.baseUrl}/trpc/${path}`), {
      method: 'POST',
      body: JSON.stringify(input ?? {}),
    });
  }

  /** A raw call that also returns the response headers (sign-in reads its cookie). */
  async callRaw(path: string, input: unknown): Promise<{ data: unknown; headers: Headers }> {
    const res = await this.send(path, new URL(`${this.baseUrl}/trpc/${path}`), {
      method: 'POST',
      body: JSON.stringify(input),
    });
    return { data: await this.unwrap(path, res), headers: res.headers };
  }

  private async call<T>(path: string, url: URL, init: { method: string; body?: string }): Promise<T> {
    return (await this.unwrap(path, await this.send(path, url, init))) as T;
  }

  private async send(path: string, url: URL, init: { method: string; body?: string }): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (this.credential && 'token' in this.credential) {
      assertSendableToken(this.credential.token);
      headers.authorization = `Bearer ${this.credential.token}`;
    }
    if (this.credential && 'cookie' in this.credential) headers.cookie = this.credential.cookie;
    try {
      return await fetch(url, { ...init, headers, signal: AbortSignal.timeout(requestTimeoutMs) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new CliError(
        exitCodes.error,
        `cannot reach the control plane at ${this.baseUrl} (${path}: ${cause}); start it with \`npm start\`, ` +
          'or set SAGAFLOW_URL to its address. If a repair timed out, run it again with the same --idempotency-key: ' +
          'it will not act twice',
      );
    }
  }

  private async unwrap(path: string, res: Response): Promise<unknown> {
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new CliError(
        exitCodes.error,
        `the control plane at ${this.baseUrl} answered ${path} with ${res.status} and no JSON; is SAGAFLOW_URL its address?`,
      );
    }
    const b = body as { result?: { data?: unknown }; error?: { message?: string; data?: Record<string, unknown> } };
    if (res.ok && b.result) return b.result.data;
    const data = b.error?.data ?? {};
    const failure: ApiFailure = {
      httpStatus: typeof data.httpStatus === 'number' ? data.httpStatus : res.status,
      code: typeof data.code === 'string' ? data.code : String(res.status),
      message: b.error?.message ?? (body as { error?: unknown }).error?.toString() ?? `HTTP ${res.status}`,
      data,
    };
    throw new CliError(exitCodeFor(failure), failure.message, { error: failure });
  }
}
