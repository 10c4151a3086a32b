import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export async function insertSignal(db: Db, s: { runId: string; name: string; payload: Json }): Promise<string> {
  const row = await db.signal.create({
    data: { run_id: s.runId, name: s.name, payload: s.payload as never },
    select: { id: true },
  });
  return row.id;
}
