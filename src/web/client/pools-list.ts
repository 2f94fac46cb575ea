/**
 * The Pools page's list of the account's pools (counts, state, interval,
 * next check) with each pool's actions: pause / resume, and delete in two
 * clicks (the first arms it for CONFIRM_MS).
 */
import type { ButtonEl, Elem, TableEl } from './browser';
import { byId, show } from './dom';
import { poolRowHtml, type PoolView } from './pool-format';

export const POOLS_LIST_IDS = Object.freeze({ table: 'pools-table', empty: 'pools-empty' });

const CONFIRM_MS = 4000;

export function poolsListHtml(): string {
  return `  <section class="panel" aria-labelledby="pools-list-h">
    <h2 id="pools-list-h">Your pools</h2>
    <p id="pools-empty" class="hint" hidden>No pools yet: create one below from a list of proxies.</p>
    <div class="table-wrap" role="region" aria-labelledby="pools-list-h" tabindex="0">
      <table id="pools-table"><thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Proxies</th><th scope="col">Working</th><th scope="col">Failed</th><th scope="col">Unchecked</th><th scope="col">Interval</th><th scope="col">Next check</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>
    </div>
  </section>`;
}

export type PoolAction = 'pause' | 'resume' | 'delete';

/** `act` runs an action the user confirmed; false: it failed (the button is enabled again). */
export function mountPoolsList(act: (action: PoolAction, id: string) => Promise<boolean>): { render(pools: readonly PoolView[]): void } {
  const tbody = byId<TableEl>(POOLS_LIST_IDS.table).tBodies[0]!;
  const empty = byId(POOLS_LIST_IDS.empty);
  const armed = new Map<string, ReturnType<typeof setTimeout>>();

  /** The first click on Delete only asks; true when this click was that. */
  const arm = (btn: ButtonEl, id: string): boolean => {
    if (armed.has(id)) return false;
    btn.textContent = 'Delete? Click again';
    armed.set(
      id,
      setTimeout(() => {
        armed.delete(id);
        btn.textContent = 'Delete';
      }, CONFIRM_MS),
    );
    return true;
  };

  tbody.addEventListener('click', async (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-act]');
    const id = btn?.dataset.id;
    const action = btn?.dataset.act as PoolAction | undefined;
    if (btn === null || btn === undefined || id === undefined || action === undefined) return;
    if (action === 'delete' && arm(btn, id)) return;
    btn.disabled = true;
    const ok = await act(action, id);
    clearTimeout(armed.get(id));
    armed.delete(id);
    if (!ok) btn.disabled = false;
  });

  return {
    render(pools) {
      const now = Date.now();
      tbody.innerHTML = pools.map((p) => poolRowHtml(p, now)).join('');
      show(empty, pools.length === 0);
    },
  };
}
