/**
 * One check result folded into a slot of a pool owner's table, in place:
 * the same rules as fold.ts foldCheck (verdict.ts, history.ts, schedule.ts;
 * a test holds the two equal), over the typed arrays instead of a row
 * object. Pure apart from the table it writes.
 *
 * Answers the outcome, the event it makes (proxy.up / proxy.down, or null)
 * and whether a field of the last passing check changed (type, protocols,
 * anonymity, https, origin, geo): only then does the flush rewrite the
 * proxy's wide row (flush-sql.ts verdictFieldsStatement).
 */
import type { GeoInfo } from '../geo/geo';
import { autoType } from '../probe/codec/auto-verdict';
import type { FoldContext, PoolProbeResult } from './fold';
import { ppm } from './fold';
import { foldHistoryInto, latencyP50, uptimeH24 } from './history';
import type { ProxyTable } from './proxy-table';
import { NO_ASN, STATUS_CODE } from './proxy-table';
import { nextCheckAt } from './schedule';
import { protocolBit, protocolsMask } from './shape';
import { applyVerdict, outcomeOf, type CheckOutcome, type ProxyEventName } from './verdict';

export interface SlotFold {
  outcome: CheckOutcome;
  event: ProxyEventName | null;
  /** A field of the last passing check changed (the wide row needs a write). */
  verdictChanged: boolean;
}

/** A check that did not happen: only the due time moves, soon (fold.ts notTried). */
export function foldNotTried(t: ProxyTable, slot: number, ctx: Pick<FoldContext, 'intervalS' | 'nowMs' | 'random'>): void {
  t.nextCheck[slot] = nextCheckAt(ctx.nowMs, ctx.intervalS, 0, ctx.random, false);
}

export function foldSlot(t: ProxyTable, slot: number, probe: PoolProbeResult, geo: GeoInfo | null, ctx: FoldContext): SlotFold {
  const outcome = outcomeOf(probe);
  if (outcome === 'not_tried') {
    foldNotTried(t, slot, ctx);
    return { outcome, event: null, verdictChanged: false };
  }
  const lastChange = t.lastChange[slot]!;
  const step = applyVerdict({ status: t.statusOf(slot), failures: t.failures[slot]!, lastChangeAt: Number.isNaN(lastChange) ? null : lastChange }, outcome, ctx.nowMs);
  const working = outcome === 'working';
  const h = t.historyOf(slot);
  if (!t.hasHistoryAt(slot)) h.fill(0);
  foldHistoryInto(h, working ? { passed: true, latencyMs: probe.responseTimeMs } : { passed: false }, ctx.nowMs);
  t.status[slot] = STATUS_CODE[step.next.status];
  t.failures[slot] = step.next.failures;
  t.lastChange[slot] = step.next.lastChangeAt ?? NaN;
  t.checks[slot] = t.checks[slot]! + 1;
  t.lastChecked[slot] = ctx.nowMs;
  t.statusCode[slot] = probe.statusCode ?? -1;
  t.responseTime[slot] = probe.responseTimeMs ?? NaN;
  const errorCode = working ? -1 : t.texts.code(probe.error?.code ?? 'bad_response'); // before t.errorCode: a new code may widen it
  t.errorCode[slot] = errorCode;
  t.setErrorMessage(slot, working ? null : (probe.error?.message ?? 'probe failed without an error'));
  t.latency[slot] = latencyP50(h, ctx.nowMs) ?? -1;
  t.uptime[slot] = ppm(uptimeH24(h, ctx.nowMs)) ?? -1;
  t.nextCheck[slot] = nextCheckAt(ctx.nowMs, ctx.intervalS, step.next.failures, ctx.random, true, t.checks[slot] === 1);
  const verdictChanged = working && foldVerdictFields(t, slot, probe, geo, ctx);
  return { outcome, event: step.event, verdictChanged };
}

/** The fields of a passing check (fold.ts's `working` branch); true when one changed. */
function foldVerdictFields(t: ProxyTable, slot: number, probe: PoolProbeResult, geo: GeoInfo | null, ctx: FoldContext): boolean {
  const passed = probe.protocols ?? [];
  const type = ctx.poolType === 'auto' ? autoType(passed) : ctx.poolType;
  const protocols = ctx.poolType === 'auto' ? protocolsMask(passed) : protocolBit(ctx.poolType);
  const texts = t.texts;
  const next = {
    type: type === 'http' ? 1 : type === 'socks4' ? 2 : type === 'socks5' ? 3 : 0,
    protocols,
    anonymity: probe.anonymity === 'elite' ? 1 : probe.anonymity === 'anonymous' ? 2 : probe.anonymity === 'transparent' ? 3 : 0,
    https: typeof probe.https === 'boolean' ? (probe.https ? 2 : 1) : 0,
    origin: t.originFor(slot, probe.origin),
    country: texts.code(geo?.country ?? null),
    countryName: texts.code(geo?.country_name ?? null),
    location: texts.code(geo?.location ?? null),
    isp: texts.code(geo?.isp ?? null),
    asn: geo?.asn ?? null,
  };
  const asn = t.asnOf(slot);
  const changed =
    t.type[slot] !== next.type ||
    t.protocols[slot] !== next.protocols ||
    t.anonymity[slot] !== next.anonymity ||
    t.https[slot] !== next.https ||
    t.originOf(slot) !== next.origin ||
    t.country[slot] !== next.country ||
    t.countryName[slot] !== next.countryName ||
    t.location[slot] !== next.location ||
    t.isp[slot] !== next.isp ||
    asn !== next.asn;
  if (!changed) return false;
  t.type[slot] = next.type;
  t.protocols[slot] = next.protocols;
  t.anonymity[slot] = next.anonymity;
  t.https[slot] = next.https;
  t.setOrigin(slot, next.origin);
  t.country[slot] = next.country;
  t.countryName[slot] = next.countryName;
  t.location[slot] = next.location;
  t.isp[slot] = next.isp;
  t.asn[slot] = next.asn === null || next.asn < 0 || next.asn >= NO_ASN ? NO_ASN : next.asn;
  return true;
}
