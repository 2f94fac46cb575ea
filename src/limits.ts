/**
 * How many probes this process may have in flight at once, from its open-file
 * limit: every probe holds one socket, and when the judge is this process's
 * own /judge, the judge holds the accepted end too. Pure functions plus one
 * read of /proc/self/limits.
 */
import { readFileSync } from 'node:fs';

/** Descriptors kept for everything else (database, HTTP clients, files, workers). */
export const RESERVED_FDS = 1000;

/** The soft "Max open files" of /proc/<pid>/limits text, or null. */
export function parseOpenFilesLimit(limitsText: string): number | null {
  const m = /^Max open files\s+(\d+|unlimited)\s+/m.exec(limitsText);
  if (!m) return null;
  return m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/** Probes in flight the process can hold, whatever the regions' capacities add up to. */
export function maxInFlightFor(openFiles: number | null, judgeInProcess: boolean): number {
  if (openFiles === null || !Number.isFinite(openFiles)) return 65_536;
  return Math.max(64, Math.floor((openFiles - RESERVED_FDS) / (judgeInProcess ? 2 : 1)));
}

export function openFilesLimit(): number | null {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return null;
  }
}
