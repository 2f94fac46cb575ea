/** The Results view's custom URLs: per URL, how many proxies passed and failed it (hidden when the check had none). */
import type { TableEl } from './browser';
import { byId, show } from './dom';
import type { ResultFile } from './results-file';
import { escapeXml, formatCount } from './svg';

export const RESULTS_CUSTOM_IDS = Object.freeze({ section: 'r-custom', table: 'r-custom-table' });

export function resultsCustomHtml(): string {
  return `    <section id="r-custom" class="panel" aria-labelledby="custom-h" hidden>
      <h2 id="custom-h">Custom URLs</h2>
      <div class="table-wrap"><table id="r-custom-table"><thead><tr><th scope="col">URL</th><th scope="col">Passed</th><th scope="col">Failed</th><th scope="col">Success rate</th></tr></thead><tbody></tbody></table></div>
    </section>`;
}

export function renderResultsCustom(file: ResultFile): void {
  const per = file.custom_url_validation?.per_url_summary ?? [];
  show(byId(RESULTS_CUSTOM_IDS.section), per.length > 0);
  byId<TableEl>(RESULTS_CUSTOM_IDS.table).tBodies[0]!.innerHTML = per
    .map((u) => `<tr><td class="mono">${escapeXml(u.url)}</td><td class="num">${formatCount(u.success_count)}</td><td class="num">${formatCount(u.failed_count)}</td><td class="num">${escapeXml(u.success_rate)}</td></tr>`)
    .join('');
}
