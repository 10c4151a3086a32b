import { EngineError } from '../errors/engine-error.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { textRules } from '../input/input-limits.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { toRunView, type RunView } from '../runtime/run-view.ts';
import { listRuns, type ListRunsFilter } from '../store/list-runs.ts';

/** The most runs one page may hold. */
export const maxRunsPerPage = 10_000;

/** Lists runs; a filter that no query should see (a NUL in a name, a page of a billion rows) is refused. */
export async function listRunViews(deps: RuntimeDeps, filter: ListRunsFilter): Promise<RunView[]> {
  const rules = textRules(deps.config.limits);
  if (filter.flowName !== undefined) assertStorableText(filter.flowName, 'flowName', rules);
  if (filter.status !== undefined) {
    if (!Array.isArray(filter.status))
      throw new EngineError('invalid_input', 'status: must be an array', { field: 'status' });
    filter.status.forEach((s, i) => assertStorableText(s, `status[${i}]`, rules));
  }
  if (!Number.isSafeInteger(filter.limit) || filter.limit < 1 || filter.limit > maxRunsPerPage)
    throw new EngineError('invalid_input', `limit: must be an integer from 1 to ${maxRunsPerPage}`, {
      field: 'limit',
    });
  return (await listRuns(deps.prisma, filter)).map(toRunView);
}
