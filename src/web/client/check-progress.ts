/**
 * The "New check" view's progress panel: the bar, checked / working /
 * time left / percent, the service's message, and throttled screen-reader
 * announcements (dom.ts announcer) while the check runs.
 */
import type { ProgressEl } from './browser';
import { announcer, byId, setText, show } from './dom';
import { formatEta } from './format';
import type { ProgressLike } from './job-follow';
import { formatCount } from './svg';

export const CHECK_PROGRESS_IDS = Object.freeze({
  panel: 'progress',
  bar: 'p-bar',
  checked: 'p-checked',
  working: 'p-working',
  eta: 'p-eta',
  percent: 'p-percent',
  message: 'p-message',
  live: 'p-live',
});

export function checkProgressHtml(): string {
  return `  <section id="progress" class="panel" aria-labelledby="progress-h" hidden>
    <h2 id="progress-h">Progress</h2>
    <progress id="p-bar" max="100" value="0" aria-labelledby="progress-h" aria-describedby="p-message"></progress>
    <dl class="stats">
      <div><dt>Checked</dt><dd id="p-checked">0 of 0</dd></div>
      <div><dt>Working so far</dt><dd id="p-working">0</dd></div>
      <div><dt>Time left</dt><dd id="p-eta">estimating…</dd></div>
      <div><dt>Done</dt><dd id="p-percent">0%</dd></div>
    </dl>
    <p id="p-message" class="hint"></p>
    <p id="p-live" class="visually-hidden" aria-live="polite" aria-atomic="true"></p>
  </section>`;
}

export type CheckProgress = ReturnType<typeof mountCheckProgress>;

export function mountCheckProgress() {
  const ids = CHECK_PROGRESS_IDS;
  const panel = byId(ids.panel);
  const bar = byId<ProgressEl>(ids.bar);
  const message = byId(ids.message);
  const live = announcer(byId(ids.live));

  const render = (m: ProgressLike): void => {
    const d = m.details ?? {};
    const total = d.total ?? 0;
    const checked = d.checked ?? 0;
    const pct = typeof m.progress === 'number' ? m.progress : 0;
    bar.value = pct;
    setText(byId(ids.checked), `${formatCount(checked)} of ${formatCount(total)}`);
    setText(byId(ids.working), formatCount(d.working_so_far ?? 0));
    setText(byId(ids.eta), m.status === 'completed' ? 'done' : m.status === 'failed' ? '—' : formatEta(m.eta));
    setText(byId(ids.percent), `${Math.floor(pct)}%`);
    setText(message, d.message ?? '');
    if (m.status === 'in_progress') {
      live.say(`${Math.floor(pct)}% done: ${formatCount(checked)} of ${formatCount(total)} checked, ${formatCount(d.working_so_far ?? 0)} working.`);
    }
  };

  return {
    render,
    /** The service's message under the bar. */
    message: (text: string) => setText(message, text),
    /** Says `text` to screen readers at once. */
    announce: (text: string) => live.now(text),
    /** The panel for a run of `total` proxies (0: not known yet). */
    begin(total: number): void {
      show(panel, true);
      panel.setAttribute('aria-busy', 'true');
      bar.value = 0;
      render({ status: 'in_progress', progress: 0, eta: null, details: { message: 'Connecting…', total, checked: 0, working_so_far: 0 } });
      panel.scrollIntoView({ block: 'nearest' });
    },
    end(): void {
      panel.setAttribute('aria-busy', 'false');
    },
  };
}
