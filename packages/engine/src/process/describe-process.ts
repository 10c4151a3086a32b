import { schemaJson } from '../definitions/schema-json.ts';
import type { ProcessDefinition } from './define-process.ts';

/** A process definition as plain data: what the console draws (the state table) and renders (repair forms). */
export interface ProcessDescription {
  name: string;
  states: string[];
  initial: string;
  final: string[];
  compensating: Record<string, string[]>;
  transitions: {
    on: string;
    kind: 'message' | 'timeout';
    from: string[];
    to: string;
    late: boolean;
    guarded: boolean;
  }[];
  timeouts: { name: string; afterMs: number; expects: string }[];
  operatorCommands: { name: string; from: string[]; to: string; description: string | null; inputSchema: unknown }[];
}

/**
 * Describes a definition as JSON-safe data. Operator command inputs are JSON Schemas from their
 * validators' Standard JSON Schema converter (null without one), so a form can be rendered without
 * the definition's code.
 */
export function describeProcess(def: ProcessDefinition): ProcessDescription {
  const transitions: ProcessDescription['transitions'] = [];
  for (const [on, list] of Object.entries(def.on)) {
    for (const t of list ?? []) {
      transitions.push({
        on,
        kind: on in def.timeouts ? 'timeout' : 'message',
        from: typeof t.from === 'string' ? [t.from] : [...t.from],
        to: t.to,
        late: t.late ?? false,
        guarded: t.guard !== undefined,
      });
    }
  }
  return {
    name: def.name,
    states: [...def.states],
    initial: def.initial,
    final: [...def.final],
    compensating: Object.fromEntries(Object.entries(def.compensating).map(([s, o]) => [s, [...(o ?? [])]])),
    transitions,
    timeouts: Object.entries(def.timeouts).map(([name, t]) => ({ name, afterMs: t.afterMs, expects: t.expects })),
    operatorCommands: Object.entries(def.operatorCommands).map(([name, c]) => ({
      name,
      from: [...c.from],
      to: c.to,
      description: c.description ?? null,
      inputSchema: schemaJson(def.operatorInputs[name]),
    })),
  };
}
