import { proxyToControl } from '@/trpc/proxy-to-control';

export function GET(req: Request): Promise<Response> {
  return proxyToControl(req);
}

export function POST(req: Request): Promise<Response> {
  return proxyToControl(req);
}
