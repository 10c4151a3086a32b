import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const packaged = fileURLToPath(new URL('../../migrations', import.meta.url));
const inRepository = fileURLToPath(new URL('../../../../prisma/migrations', import.meta.url));

/**
 * The SQL migrations shipped with the engine, in Prisma's folder format (NNNN_name/migration.sql):
 * the copy packed into the package (`migrations/`, written by `prepack`), or, inside this
 * repository, prisma/migrations itself (the single source).
 */
export const migrationsDir = existsSync(packaged) ? packaged : inRepository;
