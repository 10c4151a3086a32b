import type { ActionDefinition } from '../definitions/define-action.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import { EngineError } from '../errors/engine-error.ts';

export interface Registry {
  flows: ReadonlyMap<string, FlowDefinition>;
  actions: ReadonlyMap<string, ActionDefinition>;
}

export function buildRegistry(flows: readonly FlowDefinition[], actions: readonly ActionDefinition[]): Registry {
  return { flows: byName(flows, 'flow'), actions: byName(actions, 'action') };
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
