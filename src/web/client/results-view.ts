/**
 * The "Results" view, composed of its regions: the warnings, cards and
 * downloads (results-summary.ts), the charts and map (results-charts.ts),
 * the custom URLs (results-custom.ts) and the table of every proxy
 * (results-table.ts). This module reads the result: the full result file
 * through its signed link on this origin (format.ts sameOriginResultUrl),
 * and when it cannot be read, the check response's summary (no records).
 */
import { win } from './browser';
import { byId, setText, show } from './dom';
import { errorText, resultLinks, sameOriginResultUrl, type ResultLinks } from './format';
import { mountResultsCharts, resultsChartsHtml } from './results-charts';
import { renderResultsCustom, resultsCustomHtml } from './results-custom';
import type { ResultFile } from './results-file';
import { mountResultsSummary, resultsSummaryHtml } from './results-summary';
import { mountResultsTable, resultsTableHtml } from './results-table';
import type { ServiceInfo } from './service-info';
import { extraColumns, toRow } from './table';

export const RESULTS_VIEW_IDS = Object.freeze({ view: 'view-results', empty: 'results-empty', error: 'results-error', body: 'results-body' });

export function resultsViewHtml(): string {
  return [`<section id="view-results" class="view" aria-labelledby="results-h" hidden>
  <h1 id="results-h" tabindex="-1">Results</h1>
  <p id="results-empty" class="panel">No results yet. <a href="#/check">Start a check</a>, or open an earlier one from your <a href="#/account">account history</a>.</p>
  <p id="results-error" class="error" role="alert"></p>
  <div id="results-body" hidden>`, resultsSummaryHtml(), resultsChartsHtml(), resultsCustomHtml(), resultsTableHtml(), '  </div>', '</section>'].join('\n');
}

/** The result file at `links` (the same-origin link first), or why not. */
async function readResult(links: ResultLinks): Promise<{ file: ResultFile } | { status: number; problem: unknown }> {
  const local = sameOriginResultUrl(links.json, win().location.origin);
  let status = 0;
  let problem: unknown = null;
  for (const url of local !== null && local !== links.json ? [local, links.json] : [links.json]) {
    try {
      const r = await fetch(url);
      status = r.status;
      if (r.ok) return { file: (await r.json()) as ResultFile };
      problem = await r.json().catch(() => null);
    } catch {
      status = 0;
    }
  }
  return { status, problem };
}

export function setupResultsView() {
  const ids = RESULTS_VIEW_IDS;
  const body = byId(ids.body);
  const err = byId(ids.error);
  const summary = mountResultsSummary();
  const charts = mountResultsCharts(() => !body.hidden);
  const table = mountResultsTable();
  let loadSeq = 0;

  /** Shows a result from its links; `fallback` (the check response) fills the cards when the file cannot be read. */
  const load = async (links: ResultLinks, fallback: ResultFile | null): Promise<boolean> => {
    const seq = ++loadSeq;
    setText(err, '');
    const read = await readResult(links);
    if (seq !== loadSeq) return false;
    let file: ResultFile;
    if ('problem' in read) {
      setText(err, `The full result could not be loaded. ${errorText(read.status, read.problem)}`);
      if (fallback === null) return false;
      file = { ...fallback, proxies: [] };
    } else file = read.file;
    show(byId(ids.empty), false);
    show(body, true);
    const all = (file.proxies ?? []).map(toRow);
    summary.show(file, links, 'problem' in read ? null : all.filter((r) => r.integrity !== '').length);
    renderResultsCustom(file);
    table.show(all, extraColumns(all));
    await charts.show(file, all);
    return true;
  };

  return {
    /** After a check: the response's links (result_urls or result_url). */
    async showResponse(res: Record<string, unknown>): Promise<boolean> {
      const links = resultLinks(res.result_url, res.result_urls);
      if (links === null) {
        setText(err, 'The check finished but no result link came back.');
        return false;
      }
      return load(links, res as ResultFile);
    },
    /** From the account history: one result link. */
    async showLink(link: string): Promise<boolean> {
      const links = resultLinks(link);
      if (links === null) return false;
      return load(links, null);
    },
    hasResult: () => !body.hidden,
    /** What /health said (one machine or a cluster): the region card follows it. */
    setService: (info: ServiceInfo) => summary.setService(info),
    redraw: () => charts.redraw(),
    clear() {
      loadSeq++;
      charts.clear();
      table.clear();
      show(body, false);
      show(byId(ids.empty), true);
      setText(err, '');
    },
  };
}
