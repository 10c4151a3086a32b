import { fileURLToPath } from 'node:url';

/** The SQL migrations shipped with the engine, in Prisma's folder format (NNNN_name/migration.sql). */
export const migrationsDir = fileURLToPath(new URL('../../../../prisma/migrations', import.meta.url));
