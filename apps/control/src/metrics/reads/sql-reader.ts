import type { Database } from '@sagaflow/engine';

/** The client or an open transaction: every read here is one raw statement. */
export type SqlReader = Pick<Database['prisma'], '$queryRaw' | '$queryRawUnsafe'>;
