/**
 * The pages of a cursor-paged listing (the API's `next_cursor`), pure: the
 * cursors of the pages shown so far (the first page's is null) and the next
 * page's, so Previous goes back without the API knowing backwards.
 */
export class CursorStack {
  #shown: (string | null)[] = [null];
  #next: string | null = null;

  /** The cursor of the page to read now (null: the first page). */
  get current(): string | null {
    return this.#shown[this.#shown.length - 1] ?? null;
  }

  /** The page's index from 0. */
  get index(): number {
    return this.#shown.length - 1;
  }

  get hasPrevious(): boolean {
    return this.#shown.length > 1;
  }

  get hasNext(): boolean {
    return this.#next !== null;
  }

  /** Back to the first page (filters changed). */
  reset(): void {
    this.#shown = [null];
    this.#next = null;
  }

  /** The page read now answered with `next` (null: it was the last). */
  answered(next: string | null): void {
    this.#next = next;
  }

  /** Moves to the next page; false when there is none. */
  forward(): boolean {
    if (this.#next === null) return false;
    this.#shown.push(this.#next);
    this.#next = null;
    return true;
  }

  /** Moves to the previous page; false on the first. */
  back(): boolean {
    if (this.#shown.length <= 1) return false;
    this.#shown.pop();
    this.#next = null;
    return true;
  }
}
