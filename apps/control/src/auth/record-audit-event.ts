import type { Database } from '@sagaflow/engine';

type Prisma = Database['prisma'];
/** A transaction an audit row can be written in (Prisma's interactive one, as the engine's `audit` options pass). */
export type AuditTransaction = Parameters<Parameters<Prisma['$transaction']>[0]>[0];

export interface AuditEventInput {
  at: Date;
  actorId: string | null;
  actor: string;
  action: string;
  targetType?: string;
  targetId?: string;
  outcome: string;
  reason?: string;
  address: string | null;
  details?: Record<string, string | number | boolean | null>;
}

/** Appends one row to the audit trail (in the caller's transaction when given one). */
export async function recordAuditEvent(prisma: Prisma | AuditTransaction, e: AuditEventInput): Promise<void> {
  await prisma.auditEvent.create({
    data: {
      at: e.at,
      actor_id: e.actorId,
      actor: e.actor,
      action: e.action,
      target_type: e.targetType ?? null,
      target_id: e.targetId ?? null,
      outcome: e.outcome,
      reason: e.reason ?? null,
      address: e.address,
      details: e.details ?? {},
    },
  });
}
