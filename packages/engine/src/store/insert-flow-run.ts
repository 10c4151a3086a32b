import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export async function insertFlowRun(
  db: Db,
  row: { flowName: string; flowVersion: number; input: Json; businessKey: string | null; tags: string[] },
): Promise<string> {
  const created = await db.flowRun.create({
    data: {
      flow_name: row.flowName,
      flow_version: row.flowVersion,
      input: row.input as never,
      business_key: row.businessKey,
      tags: row.tags,
    },
    select: { id: true },
  });
  return created.id;
}
