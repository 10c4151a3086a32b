import type { ActionDefinition } from './define-action.ts';
import type { FlowDefinition } from './flow-context.ts';
import { schemaJson } from './schema-json.ts';

/** A registered flow as JSON-safe data: what a form needs to start it or signal its runs. */
export interface FlowDescription {
  name: string;
  version: number;
  /** The JSON Schema of the input it accepts; null when it declares none or it cannot be expressed. */
  inputSchema: Record<string, unknown> | null;
  /** Whether an input schema is declared at all (validated even when it has no JSON Schema). */
  validatesInput: boolean;
  /** The signals it declares, each with its payload's JSON Schema; null: it takes any signal. */
  signals: { name: string; payloadSchema: Record<string, unknown> | null }[] | null;
}

/** A registered action as JSON-safe data: the form of a repair that supplies its output. */
export interface ActionDescription {
  name: string;
  inputSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
  validatesOutput: boolean;
}

export function describeFlow(flow: FlowDefinition): FlowDescription {
  const { input, signals } = flow.schemas;
  return {
    name: flow.name,
    version: flow.version,
    inputSchema: schemaJson(input),
    validatesInput: input !== undefined,
    signals: signals
      ? Object.entries(signals).map(([name, schema]) => ({ name, payloadSchema: schemaJson(schema) }))
      : null,
  };
}

export function describeAction(action: ActionDefinition): ActionDescription {
  const { input, output } = action.schemas;
  return {
    name: action.name,
    inputSchema: schemaJson(input),
    outputSchema: schemaJson(output),
    validatesOutput: output !== undefined,
  };
}
