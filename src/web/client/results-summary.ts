/**
 * The top of the Results view: the check's warnings (service-info.ts
 * checkWarnings), the summary cards (summary-cards.ts; the region card
 * follows /health: one machine or a cluster) and the JSON / CSV / TXT
 * download links of the result.
 */
import type { AnchorEl } from './browser';
import { byId, show } from './dom';
import type { ResultLinks } from './format';
import type { ResultFile } from './results-file';
import { checkWarnings, UNKNOWN_SERVICE, type ServiceInfo } from './service-info';
import { summaryCards, type CardSource } from './summary-cards';
import { escapeXml } from './svg';

export const RESULTS_SUMMARY_IDS = Object.freeze({ warnings: 'r-warnings', cards: 'r-cards', json: 'dl-json', csv: 'dl-csv', txt: 'dl-txt' });

export function resultsSummaryHtml(): string {
  return `    <ul id="r-warnings" class="banner" role="status" hidden></ul>
    <dl id="r-cards" class="cards"></dl>
    <div class="downloads" role="group" aria-labelledby="dl-h">
      <span id="dl-h" class="downloads-label">Download</span>
      <a id="dl-json" class="button secondary" download>JSON</a>
      <a id="dl-csv" class="button secondary" download>CSV</a>
      <a id="dl-txt" class="button secondary" download>TXT <span class="visually-hidden">(working proxies)</span></a>
    </div>`;
}

export function mountResultsSummary() {
  const ids = RESULTS_SUMMARY_IDS;
  let service: ServiceInfo = UNKNOWN_SERVICE;
  let last: { file: ResultFile; lying: number | null } | null = null;

  /** `lying`: null when the records could not be read. */
  const renderCards = (file: ResultFile, lying: number | null) => {
    last = { file, lying };
    byId(ids.cards).innerHTML = summaryCards(file as CardSource, lying, service)
      .map((c) => `<div class="card${c.cls ? ` ${c.cls}` : ''}"><dt>${escapeXml(c.label)}</dt><dd>${escapeXml(c.value)}</dd></div>`)
      .join('');
  };

  return {
    show(file: ResultFile, links: ResultLinks, lying: number | null): void {
      for (const ext of ['json', 'csv', 'txt'] as const) byId<AnchorEl>(ids[ext]).href = links[ext];
      const warnings = checkWarnings(file.metadata);
      const wl = byId(ids.warnings);
      wl.innerHTML = warnings.map((w) => `<li>${escapeXml(w)}</li>`).join('');
      show(wl, warnings.length > 0);
      renderCards(file, lying);
    },
    /** What /health said: the region card follows it. */
    setService(info: ServiceInfo): void {
      service = info;
      if (last !== null) renderCards(last.file, last.lying);
    },
  };
}
