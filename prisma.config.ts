import { defineConfig } from 'prisma/config';

// Prisma 7 keeps the connection out of schema.prisma. Only `prisma generate` is used on these
// machines (the migrate commands need a downloaded engine); migrations run through our own runner.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
