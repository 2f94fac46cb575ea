/**
 * The undo list of a composition root (src/server.ts, src/agent.ts): each
 * start step pushes its undo; `unwind()` runs them in reverse, logs a step
 * that fails and goes on with the next, and leaves the list empty (so a
 * second unwind does nothing).
 */
import type { Logger } from './log';

export type StopStep = () => Promise<void> | void;

export function stopSteps(log: Logger, failed: string): { undo: StopStep[]; unwind: () => Promise<void> } {
  const undo: StopStep[] = [];
  const unwind = async () => {
    for (const u of undo.splice(0).reverse()) {
      try {
        await u();
      } catch (err) {
        log.error(failed, { err });
      }
    }
  };
  return { undo, unwind };
}
