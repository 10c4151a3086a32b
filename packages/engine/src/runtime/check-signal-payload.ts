import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { validateAgainstSchema } from '../input/validate-against-schema.ts';
import type { Registry } from './registry.ts';

/**
 * A signal checked against the schemas its run's flow declared, before anything is written: a name
 * the flow does not take, or a payload its schema refuses, is `invalid_input` naming the field
 * (`prefix` is where the caller carries them: `` for the API's own arguments, `signal.` in a
 * repair). A flow that declares no signals, or is not registered here, takes any. Returns the
 * payload as the schema produced it, which is what is stored.
 */
export async function checkSignalPayload(
  registry: Registry,
  signal: { flowName: string; name: string; payload: Json },
  prefix = '',
): Promise<Json> {
  const schemas = registry.flows.get(signal.flowName)?.schemas.signals;
  if (!schemas) return signal.payload;
  if (!Object.hasOwn(schemas, signal.name)) {
    const field = `${prefix}name`;
    const known = Object.keys(schemas).map((n) => JSON.stringify(n));
    throw new EngineError(
      'invalid_input',
      `${field}: flow "${signal.flowName}" takes the signals ${known.join(', ') || '(none)'}, not ${JSON.stringify(signal.name)}`,
      { field },
    );
  }
  const schema = schemas[signal.name];
  if (!schema) return signal.payload;
  return (await validateAgainstSchema(schema, signal.payload, `${prefix}payload`)) as Json;
}
