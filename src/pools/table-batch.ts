/**
 * A flush chunk's column arrays (flush-sql.ts StateBatch / VerdictBatch)
 * from a pool owner's table, or from rows (tests seeding verdicts, store.ts
 * applyResults). Pure. The values are copied when the chunk is taken, so
 * checks folded while the chunk is written change nothing of it.
 */
import { emptyStateBatch, emptyVerdictBatch, type StateBatch, type VerdictBatch } from './flush-sql';
import type { ProxyTable } from './proxy-table';
import type { PoolProxyRow } from './shape';

const hex = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex'));
const isoOrNull = (ms: number): string | null => (Number.isNaN(ms) ? null : new Date(ms).toISOString());
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
  b.history.push(hex(r.history));
  b.lastCheckedAt.push(r.lastCheckedAt?.toISOString() ?? null);
  b.lastChangeAt.push(r.lastChangeAt?.toISOString() ?? null);
  b.nextCheckAt.push(r.nextCheckAt.toISOString());
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
  b.history.push(t.hasHistoryAt(slot) ? hex(t.historyOf(slot)) : null);
  b.lastCheckedAt.push(isoOrNull(t.lastChecked[slot]!));
  b.lastChangeAt.push(isoOrNull(t.lastChange[slot]!));
  b.nextCheckAt.push(new Date(t.nextCheck[slot]!).toISOString());
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
