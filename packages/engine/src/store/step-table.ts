import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatuses } from './types.ts';

/** Actions and compensations carry the same claim and fence; statements take the table as a parameter. */
export type StepTable = 'action_runs' | 'compensation_runs';

export function tableSql(table: StepTable): Prisma.Sql {
  return Prisma.raw(table === 'action_runs' ? '"sagaflow"."action_runs"' : '"sagaflow"."compensation_runs"');
}

/** The open run statuses (types.ts) as a SQL list, so every statement agrees on what "open" means. */
export const openRunStatusesSql = Prisma.sql`(${Prisma.join([...openRunStatuses])})`;
