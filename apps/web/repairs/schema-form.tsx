'use client';

import { useId } from 'react';
import { JsonEditor, parseJsonText } from './json-editor';

/** The part of a JSON Schema (as zod's toJSONSchema writes it) a form is generated from. */
interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
}

type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

function kindOf(node: SchemaNode): FieldKind {
  if (Array.isArray(node.enum) && node.enum.every((v) => typeof v === 'string')) return 'enum';
  if (node.type === 'string' || node.type === 'number' || node.type === 'integer' || node.type === 'boolean')
    return node.type;
  return 'json';
}

/** The object's fields in schema order, or null when the schema is not an object with properties. */
export function schemaFields(schema: unknown): { name: string; node: SchemaNode; required: boolean }[] | null {
  if (typeof schema !== 'object' || schema === null) return null;
  const s = schema as SchemaNode;
  if (s.type !== 'object' || !s.properties) return null;
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties).map(([name, node]) => ({ name, node, required: required.has(name) }));
}

/**
 * The form's text values as the command's input: numbers as numbers, booleans as booleans, JSON
 * fields parsed; empty optional fields left out. An error names the field; the server checks again.
 */
export function formInput(
  schema: unknown,
  values: Record<string, string>,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const fields = schemaFields(schema);
  if (!fields) {
    const parsed = parseJsonText(values[''] ?? '');
    return parsed.ok
      ? { ok: true, value: parsed.value ?? {} }
      : { ok: false, error: `input: not JSON (${parsed.error})` };
  }
  const out: Record<string, unknown> = {};
  for (const { name, node, required } of fields) {
    const raw = values[name] ?? '';
    const kind = kindOf(node);
    if (raw.trim() === '' && kind !== 'boolean' && kind !== 'string') {
      if (required) return { ok: false, error: `${name}: required` };
      continue;
    }
    if (kind === 'string' || kind === 'enum') {
      if (raw === '' && !required) continue;
      out[name] = raw;
    } else if (kind === 'boolean') out[name] = raw === 'true';
    else if (kind === 'number' || kind === 'integer') {
      const n = Number(raw);
      if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n)))
        return { ok: false, error: `${name}: must be ${kind === 'integer' ? 'a whole number' : 'a number'}` };
      out[name] = n;
    } else {
      const parsed = parseJsonText(raw);
      if (!parsed.ok) return { ok: false, error: `${name}: not JSON (${parsed.error})` };
      out[name] = parsed.value;
    }
  }
  return { ok: true, value: out };
}

/** Inputs generated from a JSON Schema: text, number, checkbox, a select for an enum, JSON otherwise. */
export function SchemaForm({
  schema,
  values,
  onChange,
  testId,
}: {
  schema: unknown;
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
  testId: string;
}) {
  const baseId = useId();
  const fields = schemaFields(schema);
  const set = (name: string, v: string) => onChange({ ...values, [name]: v });
  if (!fields)
    return (
      <JsonEditor
        label="Input (JSON)"
        value={values[''] ?? ''}
        onChange={(t) => set('', t)}
        testId={`${testId}-json`}
      />
    );
  if (fields.length === 0) return <p className="muted">This command takes no input.</p>;
  return (
    <div className="schema-form" data-testid={testId}>
      {fields.map(({ name, node, required }) => {
        const id = `${baseId}-${name}`;
        const kind = kindOf(node);
        const label = `${name}${required ? ' (required)' : ''}`;
        const fieldTestId = `${testId}-${name}`;
        if (kind === 'json')
          return (
            <JsonEditor
              key={name}
              label={`${label}, JSON`}
              value={values[name] ?? ''}
              onChange={(t) => set(name, t)}
              testId={fieldTestId}
              rows={3}
            />
          );
        return (
          <div key={name} className="field">
            <label htmlFor={id}>{label}</label>{' '}
            {kind === 'boolean' ? (
              <input
                id={id}
                type="checkbox"
                data-testid={fieldTestId}
                checked={values[name] === 'true'}
                onChange={(e) => set(name, e.target.checked ? 'true' : 'false')}
              />
            ) : kind === 'enum' ? (
              <select
                id={id}
                data-testid={fieldTestId}
                value={values[name] ?? ''}
                onChange={(e) => set(name, e.target.value)}
              >
                <option value="">—</option>
                {(node.enum as string[]).map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                data-testid={fieldTestId}
                type={kind === 'string' ? 'text' : 'number'}
                required={required}
                minLength={node.minLength}
                min={node.minimum}
                max={node.maximum}
                step={kind === 'integer' ? 1 : 'any'}
                value={values[name] ?? ''}
                onChange={(e) => set(name, e.target.value)}
              />
            )}
            {node.description ? <span className="muted"> {node.description}</span> : null}
          </div>
        );
      })}
    </div>
  );
}
