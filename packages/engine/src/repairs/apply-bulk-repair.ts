import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EngineError } from '../errors/engine-error.ts';
import { lockWaitMs } from '../process/process-deps.ts';
import { applyRepair, type ApprovedAs } from './apply-repair.ts';
import { parseRepairCommand, repairTarget, type RepairCommand } from './repair-command.ts';
import type { RepairResult } from './repair-effects.ts';
import type { RepairDeps } from './repair-handler.ts';

/** The most targets one bulk repair may name. */
export const maxBulkItems = 1000;

/**
 * How long an item of a bulk waits for a held row once the bulk has spent its one lock wait on busy items
 * (ADR 0132's addendum): long enough for a worker's round (milliseconds), short of an abandoned session.
 */
export const bulkItemLockWaitFloorMs = 100;

/**
 * One command over many targets: the shared fields (kind, actor, reason, idempotency key and the
 * command's parameters) and, per item, a target and the state it was drafted against.
 */
export interface BulkRepairCommand {
  kind: string;
  actor: string;
  reason: string;
  idempotencyKey: string;
  items: { target: unknown; expected: unknown }[];
  [param: string]: unknown;
}

export interface BulkRepairItemResult {
  target: { type: string; id: string };
  /** `busy`: another session held the target past the limit (`target_busy`): nothing changed; it can be sent again. */
  outcome: 'applied' | 'conflict' | 'refused' | 'not_found' | 'busy' | 'failed';
  /** The audit row's id (none for not_found, busy or failed: nothing was decided). */
  repairId: string | null;
  result: RepairResult | null;
  message: string | null;
}

export interface BulkRepairResult {
  bulkId: string;
  applied: number;
  items: BulkRepairItemResult[];
}

/**
 * Applies one command to each item in turn, each in its own transaction with its own expected
 * state and audit row (item idempotency key: `<key>:<target>`, so a resubmitted bulk replays each
 * item instead of acting twice). Bad input anywhere is refused before the first item is applied.
 * Ended early by `keepGoing`, the result lists only the items tried.
 *
 * The whole bulk waits for rows other sessions hold about one lock wait (half the transaction limit), not
 * one per item: the time its busy items waited is taken from that, and once it is spent each later item
 * waits {@link bulkItemLockWaitFloorMs}. A session that holds many of the targets (an abandoned
 * transaction over a batch of instances) then costs the bulk seconds, not a lock wait per item.
 */
export async function applyBulkRepair(
  deps: RepairDeps,
  raw: unknown,
  opts: {
    approvedAs?: ApprovedAs;
    /** The bulk's id, when it was fixed before (an approved bulk's claim, ADR 0121); a new one otherwise. */
    bulkId?: string;
    /** Asked before each item: false ends the bulk there, with the items applied so far. */
    keepGoing?: () => boolean;
    /** Told of each item as it ends. */
    onItem?: (item: BulkRepairItemResult) => void;
  } = {},
): Promise<BulkRepairResult> {
  const commands = parseBulk(deps, raw);
  const bulkId = opts.bulkId ?? randomUUID();
  const { approvedAs } = opts;
  const items: BulkRepairItemResult[] = [];
  const push = (item: BulkRepairItemResult) => {
    items.push(item);
    opts.onItem?.(item);
  };
  const fullWait = lockWaitMs(deps.process.transactionTimeoutMs);
  let waitLeft = fullWait;
  for (const cmd of commands) {
    if (opts.keepGoing && !opts.keepGoing()) break;
    const target = repairTarget(cmd);
    const lockWait = Math.min(fullWait, Math.max(bulkItemLockWaitFloorMs, Math.round(waitLeft)));
    const started = performance.now();
    try {
      const result = await applyRepair(deps, cmd, {
        bulkId,
        lockWaitMs: lockWait,
        ...(approvedAs ? { approvedAs } : {}),
      });
      push({ target, outcome: 'applied', repairId: result.id, result, message: null });
    } catch (err) {
      const e = err instanceof EngineError ? err : null;
      const outcome =
        e?.code === 'repair_conflict'
          ? 'conflict'
          : e?.code === 'repair_refused'
            ? 'refused'
            : e?.code === 'run_not_found' || e?.code === 'instance_not_found' || e?.code === 'outbox_not_found'
              ? 'not_found'
              : e?.code === 'target_busy'
                ? 'busy'
                : 'failed';
      if (outcome === 'failed') deps.runtime.logger.error({ err, bulkId, target }, 'a bulk repair item failed');
      if (outcome === 'busy') waitLeft -= performance.now() - started;
      const repairId = (e?.details?.repairId as string | undefined) ?? null;
      push({
        target,
        outcome,
        repairId,
        result: null,
        message: err instanceof Error ? err.message : String(err),
      });
    }
  }
  return { bulkId, applied: items.filter((i) => i.outcome === 'applied').length, items };
}

/** Every item as a whole command, validated before anything is applied (the error names the item). */
export function parseBulk(deps: RepairDeps, raw: unknown): RepairCommand[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new EngineError('invalid_input', 'command: must be an object', { field: 'command' });
  const { items, idempotencyKey, ...shared } = raw as Partial<BulkRepairCommand>;
  if (!Array.isArray(items) || items.length === 0 || items.length > maxBulkItems)
    throw new EngineError('invalid_input', `items: must be an array of 1 to ${maxBulkItems} targets`, {
      field: 'items',
    });
  const seen = new Set<string>();
  return items.map((item, i) => {
    if (typeof item !== 'object' || item === null)
      throw new EngineError('invalid_input', `items[${i}]: must be an object`, { field: `items[${i}]` });
    const { target, expected, ...rest } = item as { target?: unknown; expected?: unknown };
    // An item names a target and the state expected of it; anything else would be stored unchecked.
    const extra = Object.keys(rest)[0];
    if (extra !== undefined)
      throw new EngineError(
        'invalid_input',
        `items[${i}].${extra}: is not a field of a bulk item (an item has only target and expected)`,
        { field: `items[${i}].${extra}` },
      );
    try {
      // The key is checked with the item's target appended, then rebuilt from the parsed target.
      const cmd = parseRepairCommand({ ...shared, target, expected, idempotencyKey }, deps.runtime.config.limits);
      const id = repairTarget(cmd).id;
      if (seen.has(id)) throw new EngineError('invalid_input', `target: ${id} is named twice`, { field: 'target' });
      seen.add(id);
      return { ...cmd, idempotencyKey: `${cmd.idempotencyKey}:${id}` };
    } catch (err) {
      if (!(err instanceof EngineError) || err.code !== 'invalid_input') throw err;
      const field =
        err.field === 'target' || err.field?.startsWith('target.') || err.field?.startsWith('expected')
          ? `items[${i}].${err.field}`
          : (err.field ?? 'command');
      throw new EngineError('invalid_input', err.message.replace(/^[^:]*:/, `${field}:`), { field });
    }
  });
}
