import { percentile } from '../percentile.ts';
import type { ConsoleHttp } from './console-http.ts';
import type { ConsoleQuery } from './console-queries.ts';

export interface OverHttpResult {
  name: string;
  p50Ms: number;
  p95Ms: number;
  /** The answer's size in bytes (JSON), from the last call. */
  bytes: number;
}

/**
 * Each console query called `repeat` times in a row over HTTP against the running control plane,
 * after two warm-up calls, timed on the client from the request to the parsed answer.
 */
export async function measureOverHttp(
  api: ConsoleHttp,
  queries: ConsoleQuery[],
  repeat: number,
  log: (line: string) => void,
): Promise<OverHttpResult[]> {
  const results: OverHttpResult[] = [];
  for (const q of queries) {
    for (let i = 0; i < 2; i++) await api.query(q.path, q.input);
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < repeat; i++) {
      const start = performance.now();
      const data = await api.query(q.path, q.input);
      times.push(performance.now() - start);
      bytes = JSON.stringify(data).length;
    }
    const result = { name: q.name, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95), bytes };
    results.push(result);
    log(`over HTTP: ${q.name}: p50 ${result.p50Ms.toFixed(1)} ms, p95 ${result.p95Ms.toFixed(1)} ms, ${bytes} B`);
  }
  return results;
}
