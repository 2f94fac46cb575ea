/**
 * The results table's markup, pure (rows in, HTML text out, every value
 * escaped): one `<tr>` per row with the fixed columns and the optional ones
 * the job has (table.ts extraColumns), in the order of the page's header:
 * proxy, status, [integrity], [protocols], [https], [exits / samples],
 * response, anonymity, country, city, ISP, exit IP, error: the optional ones
 * next to the status, where a wide table still shows them. A proxy that lied
 * has its error code highlighted in the integrity column. The error column
 * shows the code and its message (cut at ERROR_MESSAGE_CHARS; the whole of
 * it on hover).
 */
import { escapeXml } from './svg';
import type { ExtraColumns, Row } from './table';

const muted = '<td class="muted">—</td>';
const cell = (s: string | number | null) => (s === null || s === '' ? muted : `<td>${escapeXml(String(s))}</td>`);

/** How many columns the table shows with these optional ones. */
export function columnCount(c: ExtraColumns): number {
  return 9 + Number(c.protocols) + Number(c.https) + Number(c.rotation) + Number(c.integrity);
}

/** "3 / 3" distinct exits of samples, with a "rotating" badge when more than one exit. */
export function rotationCell(r: Row): string {
  if (r.samples === null) return muted;
  const title = `${r.succeeded ?? 0} of ${r.samples} samples passed; ${r.exits ?? 0} distinct exit ${r.exits === 1 ? 'address' : 'addresses'}`;
  const badge = r.rotating ? ' <span class="badge rot">rotating</span>' : '';
  return `<td class="num" title="${escapeXml(title)}">${r.exits ?? 0} / ${r.samples}${badge}</td>`;
}

export function integrityCell(r: Row): string {
  if (r.integrity === '') return muted;
  return `<td><span class="badge lie" title="${escapeXml(r.errorMessage)}">${escapeXml(r.integrity)}</span></td>`;
}

export function httpsCell(r: Row): string {
  if (r.https === '') return muted;
  return r.https === 'yes' ? '<td><span class="badge ok">yes</span></td>' : '<td>no</td>';
}

export function protocolsCell(r: Row): string {
  if (r.protocols === '' || r.protocols === 'none') return r.protocols === 'none' ? '<td class="muted">none</td>' : muted;
  return `<td>${escapeXml(r.protocols)}</td>`;
}

/** The error column's message is cut here (the full text is the cell's title). */
export const ERROR_MESSAGE_CHARS = 80;

export function errorCell(r: Row): string {
  if (r.error === '') return muted;
  const msg = r.errorMessage;
  const cut = msg.length > ERROR_MESSAGE_CHARS ? `${msg.slice(0, ERROR_MESSAGE_CHARS - 1)}…` : msg;
  const text = cut === '' ? '' : ` <span class="err-msg">${escapeXml(cut)}</span>`;
  return `<td class="err" title="${escapeXml(msg === '' ? r.error : `${r.error}: ${msg}`)}"><code>${escapeXml(r.error)}</code>${text}</td>`;
}

export function rowHtml(r: Row, c: ExtraColumns): string {
  return (
    `<tr><td class="mono">${escapeXml(r.address)}</td>` +
    `<td><span class="badge ${r.status === 'working' ? 'ok' : 'bad'}">${escapeXml(r.status)}</span></td>` +
    (c.integrity ? integrityCell(r) : '') +
    (c.protocols ? protocolsCell(r) : '') +
    (c.https ? httpsCell(r) : '') +
    (c.rotation ? rotationCell(r) : '') +
    `<td class="num">${r.ms === null ? '—' : `${r.ms.toFixed(0)} ms`}</td>` +
    cell(r.anonymity) +
    cell(r.countryName || r.country) +
    cell(r.city) +
    cell(r.isp) +
    `<td class="mono">${escapeXml(r.origin) || '—'}</td>` +
    errorCell(r) +
    '</tr>'
  );
}

/** The body of the table: the rows, or one row saying nothing matches. */
export function tableBodyHtml(rows: readonly Row[], c: ExtraColumns): string {
  if (rows.length === 0) return `<tr><td colspan="${columnCount(c)}" class="muted">No proxy matches these filters.</td></tr>`;
  return rows.map((r) => rowHtml(r, c)).join('');
}
