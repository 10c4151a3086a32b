/**
 * A repair command as the console drafts it: everything the engine takes but the reason (asked for
 * at apply) and the actor (the session's operator, set by the control plane).
 */
export interface DraftCommand {
  kind: string;
  target:
    | { runId: string; stepSequence?: number }
    | { runId: string; compensation: { rollbackLevel: number; ordinal: number } }
    | { instanceId: string }
    | { outboxId: string };
  /** The state the page showed when the operator drafted it: apply is refused if it moved. */
  expected: Record<string, string | number>;
  idempotencyKey: string;
  /** The command's own parameters (signal, output, mode, command and input, to; a requeue has none). */
  params: Record<string, unknown>;
}

/** The command as the API takes it, with the operator's reason. */
export function commandBody(draft: DraftCommand, reason: string): Record<string, unknown> {
  return {
    ...draft.params,
    kind: draft.kind,
    target: draft.target,
    expected: draft.expected,
    idempotencyKey: draft.idempotencyKey,
    reason,
  };
}

/** A fresh key: a resubmission of one draft returns its first result; a new draft acts anew. */
export function newKey(): string {
  return crypto.randomUUID();
}
