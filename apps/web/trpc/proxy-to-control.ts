import { sameOrigin } from '@/auth/request-guards';
import { webEnv } from '@/env';

const prefix = '/api/trpc/';
const upstreamTimeoutMs = 15_000;
// JSON-RPC code tRPC uses for every 5xx key (BAD_GATEWAY included).
const internalRpcCode = -32603;

/**
 * Forwards a tRPC call from the browser to the control plane. The browser only ever talks to the
 * console's own origin; CONTROL_URL is read at request time, so one build serves any deployment.
 * The session cookie goes up and its Set-Cookie comes back, so the cookie belongs to the console's
 * origin. A POST whose Origin is not this console is refused here (the Host was checked in
 * proxy.ts); the control plane checks roles, and its own Origin list for browsers that reach it
 * directly.
 */
export async function proxyToControl(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const procedurePath = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : '';
  if (req.method !== 'GET' && req.method !== 'HEAD' && !sameOrigin(req.headers.get('origin'), req.headers.get('host')))
    return rpcError(url, procedurePath, 403, 'FORBIDDEN', -32003, 'requests from another site are not accepted');
  let base: string;
  try {
    base = webEnv().CONTROL_URL;
  } catch (err) {
    return badGateway(url, procedurePath, err instanceof Error ? err.message : String(err));
  }
  const headers = new Headers();
  for (const name of ['content-type', 'accept', 'trpc-accept', 'cookie', 'x-forwarded-for']) {
    const value = req.headers.get(name);
    if (value) headers.set(name, value);
  }
  try {
    const upstream = await fetch(`${base}/trpc/${procedurePath}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.text(),
      cache: 'no-store',
      signal: AbortSignal.timeout(upstreamTimeoutMs),
    });
    const answerHeaders = new Headers({
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
      'cache-control': 'no-store',
    });
    for (const cookie of upstream.headers.getSetCookie()) answerHeaders.append('set-cookie', cookie);
    for (const name of ['retry-after', 'x-request-id']) {
      const value = upstream.headers.get(name);
      if (value) answerHeaders.set(name, value);
    }
    return new Response(upstream.body, { status: upstream.status, headers: answerHeaders });
  } catch (err) {
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    return badGateway(url, procedurePath, `control plane unreachable at ${base} (${reason})`);
  }
}

/** A tRPC-shaped 502 (one entry per batched call), so the console shows the reason, not "fetch failed". */
function badGateway(url: URL, procedurePath: string, message: string): Response {
  return rpcError(url, procedurePath, 502, 'BAD_GATEWAY', internalRpcCode, message);
}

/** A tRPC-shaped error answer, one entry per batched call. */
function rpcError(
  url: URL,
  procedurePath: string,
  httpStatus: number,
  code: string,
  rpcCode: number,
  message: string,
): Response {
  const errorFor = (path: string) => ({ error: { message, code: rpcCode, data: { code, httpStatus, path } } });
  const paths = decodeURIComponent(procedurePath).split(',');
  const body = url.searchParams.get('batch') === '1' ? paths.map(errorFor) : errorFor(paths[0] ?? '');
  return Response.json(body, { status: httpStatus, headers: { 'cache-control': 'no-store' } });
}
