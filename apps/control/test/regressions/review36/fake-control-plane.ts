import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a fake control plane does with one request: answer it, or misbehave on its socket. */
export type FakeAnswer = (req: IncomingMessage, res: ServerResponse) => void;

export interface FakeControlPlane {
  url: string;
  /** Every request it received: method, tRPC path (no query), and the Authorization header. */
  requests: { method: string; path: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

/** A JSON answer in tRPC's plain HTTP shape. */
export const trpcData =
  (data: unknown): FakeAnswer =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ result: { data } }));
  };

/** A catalogue holding run.kick only (what a kick drafts against). */
export const kickCatalogue = {
  'run.kick': { target: 'run', destructive: false, adminOnly: false, description: 'a fresh job' },
};

/**
 * A real HTTP server standing in for the control plane, answering each tRPC path (`runs.page`,
 * `repairs.applyOne`, …) with the handler given for it, and 404 JSON otherwise. It records what it received.
 */
export async function startFakeControlPlane(routes: Record<string, FakeAnswer>): Promise<FakeControlPlane> {
  const requests: FakeControlPlane['requests'] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]?.replace(/^\/trpc\//, '') ?? '';
    requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization });
    const route = routes[path];
    if (route) return route(req, res);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no ${path}`, data: { httpStatus: 404, code: 'NOT_FOUND' } } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
