import type { Database } from '@sagaflow/engine';
import { hashPassword } from './password.ts';
import { recordAuditEvent } from './record-audit-event.ts';
import type { Role } from './roles.ts';
import { normaliseName } from './sign-in.ts';

export interface NewOperator {
  name: string;
  displayName: string;
  role: Role;
  password: string;
}

/** Creates an operator with an argon2id password hash and audits who created it. Returns its id. */
export async function createOperator(
  prisma: Database['prisma'],
  operator: NewOperator,
  by: { id: string | null; name: string; address: string | null; at: Date },
): Promise<string> {
  const passwordHash = await hashPassword(operator.password);
  const name = normaliseName(operator.name);
  return prisma.$transaction(async (tx) => {
    const row = await tx.operator.create({
      data: { name, display_name: operator.displayName, role: operator.role, password_hash: passwordHash },
      select: { id: true },
    });
    await recordAuditEvent(tx, {
      at: by.at,
      actorId: by.id,
      actor: by.name,
      action: 'operator_created',
      targetType: 'operator',
      targetId: name,
      outcome: 'succeeded',
      address: by.address,
      details: { role: operator.role },
    });
    return row.id;
  });
}
