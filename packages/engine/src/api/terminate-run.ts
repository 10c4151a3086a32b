import { EngineError } from '../errors/engine-error.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { settleRun } from '../runtime/settle-run.ts';
import { listOpenChildren } from '../store/list-open-children.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). Reaches 'propagate' children.
 */
export async function terminateRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  const run = await deps.prisma.flowRun.findUnique({ where: { id: runId } });
  if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
  const terminated =
    (await settleRun(deps, run, { status: 'Terminated', error: { name: 'Terminated', message: opts.reason } })) ===
    'settled';
  if (terminated) {
    for (const child of await listOpenChildren(deps.prisma, runId))
      await terminateRun(deps, child, { reason: `parent ${runId} was terminated: ${opts.reason}` });
  }
  return { terminated };
}
