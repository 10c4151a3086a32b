import type { Database } from '../db/database.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { findFailingTimeouts } from '../store/find-failing-timeouts.ts';
import { toFailingTimeout, type FailingTimeout } from './instance-view.ts';

/**
 * The failing timeout of each of these instances (ADR 0127), by instance id; an instance with none
 * is absent. For a list of instances read elsewhere (the control plane's instances page): one read by
 * the listed ids. Ids that are not uuids are passed over.
 */
export async function instancesFailingTimeouts(
  db: Pick<Database, 'prisma'>,
  instanceIds: readonly string[],
): Promise<Map<string, FailingTimeout>> {
  const found = await findFailingTimeouts(db.prisma, instanceIds.filter(isUuid));
  const out = new Map<string, FailingTimeout>();
  for (const [id, row] of found) {
    const t = toFailingTimeout(row);
    if (t) out.set(id, t);
  }
  return out;
}
