import { webEnv } from '@/env';

const upstreamTimeoutMs = 60_000;
const kinds = new Set(['runs', 'instances']);

const refusal = (status: number, error: string) =>
  Response.json({ error }, { status, headers: { 'cache-control': 'no-store' } });

/**
 * GET /api/history/{runs|instances}/<id>: the control plane's history download, passed through
 * with the browser's session cookie (the control plane checks the session and role) and its
 * Content-Disposition, so the link saves a file named after the run or instance.
 */
export async function proxyHistory(req: Request, params: Promise<{ kind: string; id: string }>): Promise<Response> {
  const { kind, id } = await params;
  if (!kinds.has(kind)) return refusal(404, `no history of ${JSON.stringify(kind)}; ask for runs or instances`);
  let base: string;
  try {
    base = webEnv().CONTROL_URL;
  } catch (err) {
    return refusal(502, err instanceof Error ? err.message : String(err));
  }
  const headers = new Headers();
  for (const name of ['cookie', 'x-forwarded-for']) {
    const value = req.headers.get(name);
    if (value) headers.set(name, value);
  }
  try {
    const upstream = await fetch(`${base}/history/${kind}/${encodeURIComponent(id)}`, {
      headers,
      cache: 'no-store',
      signal: AbortSignal.timeout(upstreamTimeoutMs),
    });
    const answer = new Headers({
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
      'cache-control': 'no-store',
    });
    const disposition = upstream.headers.get('content-disposition');
    if (disposition) answer.set('content-disposition', disposition);
    return new Response(upstream.body, { status: upstream.status, headers: answer });
  } catch (err) {
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    return refusal(502, `control plane unreachable at ${base} (${reason})`);
  }
}
