import type { ActionDefinition } from '../definitions/define-action.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import { EngineError } from '../errors/engine-error.ts';

export interface Registry {
  flows: ReadonlyMap<string, FlowDefinition>;
  actions: ReadonlyMap<string, ActionDefinition>;
  /**
   * The flows' names and, at the same index, their versions: what the job claim and the replay's load
   * test a run against (ADR 0112), built once instead of at every claim.
   */
  flowNames: readonly string[];
  flowVersions: readonly number[];
}

export function buildRegistry(flows: readonly FlowDefinition[], actions: readonly ActionDefinition[]): Registry {
  const byFlow = byName(flows, 'flow');
  return {
    flows: byFlow,
    actions: byName(actions, 'action'),
    flowNames: [...byFlow.keys()],
    flowVersions: [...byFlow.values()].map((f) => f.version),
  };
}

function byName<T extends { name: string }>(items: readonly T[], what: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    if (map.has(item.name))
      throw new EngineError('config_invalid', `two ${what}s are registered as "${item.name}"; names must be unique`);
    map.set(item.name, item);
  }
  return map;
}
