import { EngineError } from '../errors/engine-error.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { settleRun } from '../runtime/settle-run.ts';
import { listOpenChildren } from '../store/list-open-children.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). Reaches 'propagate' children.
 * Bad input (a run id that is not a uuid, a reason that cannot be stored) is refused before any read.
 */
export async function terminateRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  assertUuid(runId, 'runId');
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  assertStorableText(opts.reason, 'reason', textRules(deps.config.limits));
  return terminateTree(deps, runId, opts.reason);
}

async function terminateTree(deps: RuntimeDeps, runId: string, reason: string): Promise<{ terminated: boolean }> {
  const run = await deps.prisma.flowRun.findUnique({ where: { id: runId } });
  if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
  const terminated =
    (await settleRun(deps, run, { status: 'Terminated', error: { name: 'Terminated', message: reason } })) ===
    'settled';
  if (terminated) {
    for (const child of await listOpenChildren(deps.prisma, runId))
      await terminateTree(deps, child, `parent ${runId} was terminated: ${reason}`);
  }
  return { terminated };
}
