import { proxyHistory } from '@/history/proxy-history';

export function GET(req: Request, ctx: { params: Promise<{ kind: string; id: string }> }): Promise<Response> {
  return proxyHistory(req, ctx.params);
}
