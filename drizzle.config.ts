/**
 * drizzle-kit configuration: `npx drizzle-kit generate` turns db/schema.ts
 * into SQL migrations under db/migrations (committed; applied at start-up).
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema.ts',
  out: './db/migrations',
});
