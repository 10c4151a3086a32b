import { EngineError } from '../errors/engine-error.ts';
import { findSagaInstance } from '../store/find-saga-instance.ts';
import type { ArmedTimeout } from './decide.ts';
import type { EmittedCommand, ProcessDefinition } from './define-process.ts';
import { checkDecisionToStore } from './check-decision.ts';
import { decodeStateOrThrow } from './decode-state.ts';
import { definitionOf, type ProcessDeps } from './process-deps.ts';
import {
  checkOperatorCommand,
  decideOperatorCommand,
  handledAlready,
  parseOperatorCommand,
  type OperatorCommand,
  type OperatorCommandResult,
} from './run-operator-command.ts';

export type OperatorCommandPreview =
  | { outcome: 'would_apply'; from: string; to: string; commands: EmittedCommand[]; timeouts: ArmedTimeout[] }
  | Exclude<OperatorCommandResult, { outcome: 'applied' }>;

/**
 * What an operator command would do now — the transition, the commands it would queue, the timeouts
 * it would arm — without writing anything. Applying it later re-checks everything under the lock.
 */
export async function previewOperatorCommand(
  deps: ProcessDeps,
  process: string | ProcessDefinition,
  instanceId: string,
  cmd: OperatorCommand,
): Promise<OperatorCommandPreview> {
  const def = definitionOf(deps, process);
  const parsed = await parseOperatorCommand(def, instanceId, cmd);
  const { id, spec } = parsed;
  const row = await findSagaInstance(deps.prisma, id);
  if (!row || row.process_name !== def.name)
    throw new EngineError('instance_not_found', `no instance ${id} of "${def.name}"`);
  if (await handledAlready(deps.prisma, def, parsed)) return { outcome: 'duplicate' };
  const rejected = checkOperatorCommand(row, cmd.expectedState, spec);
  if (rejected) return rejected;
  const data = decodeStateOrThrow(def, row.state, row.id);
  const decision = decideOperatorCommand(def, parsed, row, data);
  // Applying it would be refused for the same reason: say so now.
  checkDecisionToStore(def, decision, row.id, deps.limits);
  return {
    outcome: 'would_apply',
    from: decision.from,
    to: decision.to,
    commands: decision.commands,
    timeouts: decision.timeouts,
  };
}
