import { statusIn } from './keyed-status.ts';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import type { Db } from './types.ts';

/**
 * Records, once per timer, that a due timeout of a quarantined instance was held back: a
 * `skipped_quarantined` history row named after the timeout. The timeout itself stays Pending
 * (armed); it fires after a release. Returns how many were newly recorded.
 *
 * An instance another transaction holds (a delivery to it, a release) is passed over: its timers are
 * noted on a later pass. Without SKIP LOCKED the insert's foreign-key check waited for that
 * transaction, and the whole timeout pass with it (review 29).
 *
 * Once per timer across replicas too (review 39): two overlapping passes both took the key-share lock,
 * neither saw the other's uncommitted note, and both inserted one. Now the instances are locked first,
 * `FOR NO KEY UPDATE SKIP LOCKED` (a lock two noters cannot share, and still none that waits for or
 * stops a foreign-key check), and the note is inserted by a second statement of the same transaction,
 * whose snapshot is taken after the locks are held: a rival's note for one of them has then either
 * committed (and is seen) or its instance was skipped. Runs in the caller's transaction; see
 * {@link noteHeldTimeouts} for the timeout pass's own.
 *
 * The due timers are looked up by their status (the armed timers' index is the path); each one's
 * instance by its id, its status tested through `status_in` (ADR 0098). A plain `i.status =
 * 'QUARANTINED'` let the planner, from statistics taken while no instance was open, read every open
 * instance of the process through their partial index for each due timer.
 */
export async function recordHeldTimeouts(
  tx: Prisma.TransactionClient,
  args: { now: Date; processNames: readonly string[] },
): Promise<number> {
  const ids = [...new Set(await lockHeldInstances(tx, args))];
  if (ids.length === 0) return 0;
  return tx.$executeRaw`
    insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, outcome, detail, at)
    select t.instance_id, i.process_name, i.current_state, i.current_state, t.id::text, t.name, 'skipped_quarantined',
           jsonb_build_object('timer', 'held until release', 'dueAt', t.due_at), ${args.now}::timestamptz
      from "sagaflow"."process_timeouts" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id
     where i.id = any(${ids}::uuid[])
       and ${statusIn('t.status', ['Pending'])}
       and t.due_at <= ${args.now}::timestamptz
       and ${statusIn('i.status', ['QUARANTINED'])}
       and not exists (select 1 from "sagaflow"."process_transitions" p
                        where p.instance_id = t.instance_id and p.message_id = t.id::text
                          and p.outcome = 'skipped_quarantined')`;
}

/** The quarantined instances with a due timer not yet noted, locked against another noter (skipping held ones). */
async function lockHeldInstances(db: Db, args: { now: Date; processNames: readonly string[] }): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    select i.id::text as id
      from "sagaflow"."process_timeouts" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id
     where t.status = 'Pending'
       and t.due_at <= ${args.now}::timestamptz
       and ${statusIn('i.status', ['QUARANTINED'])}
       and i.process_name = any(${args.processNames}::text[])
       and not exists (select 1 from "sagaflow"."process_transitions" p
                        where p.instance_id = t.instance_id and p.message_id = t.id::text
                          and p.outcome = 'skipped_quarantined')
       for no key update of i skip locked`;
  return rows.map((r) => r.id);
}

/**
 * {@link recordHeldTimeouts} for a caller without a transaction (the timeout pass): the lock statement
 * runs alone first, as a probe, so the usual answer (nothing held) costs one statement, as before; only
 * when it finds something are the lock and the note run in a transaction of their own.
 */
export async function noteHeldTimeouts(
  prisma: PrismaClient,
  args: { now: Date; processNames: readonly string[] },
  options: { timeoutMs: number },
): Promise<number> {
  if ((await lockHeldInstances(prisma, args)).length === 0) return 0;
  return prisma.$transaction((tx) => recordHeldTimeouts(tx, args), {
    maxWait: options.timeoutMs,
    timeout: options.timeoutMs,
  });
}
