/**
 * A flush chunk's column arrays (flush-sql.ts StateBatch / VerdictBatch)
 * from a pool owner's table, or from rows (tests seeding verdicts, store.ts
 * applyResults). Pure. The values are copied when the chunk is taken, so
 * checks folded while the chunk is written change nothing of it.
 */
import { HISTORY_BYTES } from './history';
import { emptyStateBatch, emptyVerdictBatch, type StateBatch, type VerdictBatch } from './flush-sql';
import type { ProxyTable } from './proxy-table';
import type { PoolProxyRow } from './shape';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
/** A history that is none (null, or not HISTORY_BYTES long: the table keeps none of it either). */
const NO_HISTORY = '00'.repeat(HISTORY_BYTES);
const msOrNull = (ms: number): number | null => (Number.isNaN(ms) ? null : ms);
const orNull = (v: number, none: number): number | null => (v === none || Number.isNaN(v) ? null : v);

export function pushStateRow(b: StateBatch, r: PoolProxyRow): void {
  b.id.push(r.id);
  b.status.push(r.status);
  b.failures.push(r.failures);
  b.checks.push(r.checks);
  b.statusCode.push(r.statusCode);
  b.responseTimeMs.push(r.responseTimeMs);
  b.errorCode.push(r.errorCode);
  b.errorMessage.push(r.errorMessage);
  b.latencyP50Ms.push(r.latencyP50Ms);
  b.uptimeH24Ppm.push(r.uptimeH24Ppm);
  b.history.push(r.history !== null && r.history.length === HISTORY_BYTES ? hex(r.history) : NO_HISTORY);
  b.lastCheckedMs.push(r.lastCheckedAt?.getTime() ?? null);
  b.lastChangeMs.push(r.lastChangeAt?.getTime() ?? null);
  b.nextCheckMs.push(r.nextCheckAt.getTime());
}

export function pushVerdictRow(b: VerdictBatch, r: PoolProxyRow): void {
  b.id.push(r.id);
  b.type.push(r.type);
  b.protocols.push(r.protocols);
  b.anonymity.push(r.anonymity);
  b.https.push(r.https);
  b.origin.push(r.origin);
  b.country.push(r.country);
  b.countryName.push(r.countryName);
  b.location.push(r.location);
  b.isp.push(r.isp);
  b.asn.push(r.asn);
}

/** Both batches of whole rows (every row's verdict fields written). */
export function batchesOfRows(rows: readonly PoolProxyRow[]): { state: StateBatch; verdicts: VerdictBatch } {
  const state = emptyStateBatch();
  const verdicts = emptyVerdictBatch();
  for (const r of rows) {
    pushStateRow(state, r);
    pushVerdictRow(verdicts, r);
  }
  return { state, verdicts };
}

/** Slot `slot`'s state appended to `b`, straight from the arrays (no row object). */
export function pushStateSlot(b: StateBatch, t: ProxyTable, slot: number): void {
  b.id.push(t.id[slot]!);
  b.status.push(t.statusOf(slot));
  b.failures.push(t.failures[slot]!);
  b.checks.push(t.checks[slot]!);
  b.statusCode.push(orNull(t.statusCode[slot]!, -1));
  b.responseTimeMs.push(orNull(t.responseTime[slot]!, NaN));
  b.errorCode.push(t.texts.text(t.errorCode[slot]!));
  b.errorMessage.push(t.errorMessageOf(slot));
  b.latencyP50Ms.push(orNull(t.latency[slot]!, -1));
  b.uptimeH24Ppm.push(orNull(t.uptime[slot]!, -1));
  b.history.push(t.hasHistoryAt(slot) ? hex(t.historyOf(slot)) : NO_HISTORY);
  b.lastCheckedMs.push(msOrNull(t.lastChecked[slot]!));
  b.lastChangeMs.push(msOrNull(t.lastChange[slot]!));
  b.nextCheckMs.push(t.nextCheck[slot]!);
}

export function pushVerdictSlot(b: VerdictBatch, t: ProxyTable, slot: number): void {
  b.id.push(t.id[slot]!);
  b.type.push(t.typeOf(slot));
  b.protocols.push(t.protocols[slot]!);
  b.anonymity.push(t.anonymityOf(slot));
  b.https.push(t.httpsOf(slot));
  b.origin.push(t.originOf(slot));
  b.country.push(t.texts.text(t.country[slot]!));
  b.countryName.push(t.texts.text(t.countryName[slot]!));
  b.location.push(t.texts.text(t.location[slot]!));
  b.isp.push(t.texts.text(t.isp[slot]!));
  b.asn.push(t.asnOf(slot));
}
