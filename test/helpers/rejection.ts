/**
 * What a promise rejects with (a test fails when it resolves).
 *
 * For promises that wait on the embedded database: bun test's
 * `expect(pending).rejects` waits in a loop that never delivers a worker
 * thread's messages (Bun 1.4), so a statement of PGlite's thread
 * (db/pglite-thread.ts) never answers inside it. Await the promise first:
 * `expect(await rejection(p)).toMatchObject(...)`.
 */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  let value: unknown;
  try {
    value = await p;
  } catch (err) {
    return err;
  }
  throw new Error(`expected a rejection, the promise resolved with ${String(value)}`);
}
