import { open, stat } from 'node:fs/promises';

/** What the sampled plans of a prune show: which indexes it read, and any sequential scan of a big table. */
export interface SampledPlans {
  plans: number;
  /** Index name → plans that used it. */
  indexes: Record<string, number>;
  /** Table → plans that scanned it sequentially, and the statements (their start) that did. */
  seqScans: Record<string, number>;
  seqScanStatements: string[];
}

const bigTables =
  /Seq Scan on (flow_runs|action_runs|compensation_runs|flow_events|signals|timers|jobs|process_transitions|saga_instances|outbox|inbox)\b/g;
const indexUse = /(?:Index(?: Only)? Scan(?: Backward)? using|Bitmap Index Scan on) (\w+)/g;

/** The server log's length now: read plans from here on with {@link readSampledPlans}. */
export async function logOffset(path: string): Promise<number> {
  return (await stat(path)).size;
}

/**
 * Reads the plans auto_explain wrote to the server log after `from` (see the bench's database
 * settings) and counts index use and sequential scans of the retention tables.
 */
export async function readSampledPlans(path: string, from: number): Promise<SampledPlans> {
  const file = await open(path);
  let text: string;
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(size - from);
    await file.read(buffer, 0, buffer.length, from);
    text = buffer.toString('utf8');
  } finally {
    await file.close();
  }
  const plans = text.split(/LOG:\s+duration: [\d.]+ ms\s+plan:/).slice(1);
  const result: SampledPlans = { plans: plans.length, indexes: {}, seqScans: {}, seqScanStatements: [] };
  const statements = new Set<string>();
  for (const plan of plans) {
    const body = plan.split(/\n\S[^\n]*LOG:/)[0] ?? plan;
    for (const name of new Set([...body.matchAll(indexUse)].map((m) => m[1] ?? '?')))
      result.indexes[name] = (result.indexes[name] ?? 0) + 1;
    const scanned = new Set([...body.matchAll(bigTables)].map((m) => m[1] ?? '?'));
    for (const table of scanned) result.seqScans[table] = (result.seqScans[table] ?? 0) + 1;
    const query = /Query Text:\s*([\s\S]*?)\n\s*(?:[A-Z][a-z]+ |->)/.exec(body)?.[1];
    if (scanned.size > 0 && query) statements.add(query.replace(/\s+/g, ' ').trim().slice(0, 90));
  }
  result.seqScanStatements = [...statements];
  return result;
}
