import { webEnv } from '@/env';

const prefix = '/api/trpc/';
const upstreamTimeoutMs = 15_000;
// JSON-RPC code tRPC uses for every 5xx key (BAD_GATEWAY included).
const internalRpcCode = -32603;

/**
 * Forwards a tRPC call from the browser to the control plane. The browser only ever talks to the
 * console's own origin; CONTROL_URL is read at request time, so one build serves any deployment.
 */
export async function proxyToControl(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const procedurePath = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : '';
  let base: string;
  try {
    base = webEnv().CONTROL_URL;
  } catch (err) {
    return badGateway(url, procedurePath, err instanceof Error ? err.message : String(err));
  }
  const headers = new Headers();
  for (const name of ['content-type', 'accept', 'trpc-accept']) {
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
    return new Response(upstream.body, {
      status: upstream.status,
      headers: {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
        'cache-control': 'no-store',
      },
    });
  } catch (err) {
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    return badGateway(url, procedurePath, `control plane unreachable at ${base} (${reason})`);
  }
}

/** A tRPC-shaped 502 (one entry per batched call), so the console shows the reason, not "fetch failed". */
function badGateway(url: URL, procedurePath: string, message: string): Response {
  const errorFor = (path: string) => ({
    error: { message, code: internalRpcCode, data: { code: 'BAD_GATEWAY', httpStatus: 502, path } },
  });
  const paths = decodeURIComponent(procedurePath).split(',');
  const body = url.searchParams.get('batch') === '1' ? paths.map(errorFor) : errorFor(paths[0] ?? '');
  return Response.json(body, { status: 502, headers: { 'cache-control': 'no-store' } });
}
