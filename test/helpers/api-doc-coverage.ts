/**
 * Does docs/API.md cover an OpenAPI document? Pure: markdown text + document
 * in, a list of problems out (empty = covered).
 *
 * A route's section is the markdown heading (#..######) whose text contains
 * `METHOD /path` exactly as the document spells the path (OpenAPI templates:
 * `/result/{name}`), up to the next heading of the same or a higher level.
 * Every operation must have a section, and every response status the
 * operation declares must appear in its section as a number of its own
 * (`402`, not inside `4020` or `1.402`).
 */

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface Section {
  heading: string;
  level: number;
  body: string;
}

/** Headings and the text under each (up to the next heading of the same or a higher level). */
export function markdownSections(markdown: string): Section[] {
  const lines = markdown.split('\n');
  const heads: { i: number; level: number; text: string }[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6})\s+(.*)$/.exec(line);
    if (m) heads.push({ i, level: m[1]!.length, text: m[2]!.trim() });
  });
  return heads.map((h, k) => {
    const next = heads.slice(k + 1).find((o) => o.level <= h.level);
    return { heading: h.text, level: h.level, body: lines.slice(h.i + 1, next?.i ?? lines.length).join('\n') };
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The section of `METHOD path`, or undefined. */
export function routeSection(sections: Section[], method: string, path: string): Section | undefined {
  const re = new RegExp(`(^|[^A-Za-z])${method.toUpperCase()}\\s+\`?${escape(path)}\`?(?![A-Za-z0-9_/{-])`);
  return sections.find((s) => re.test(s.heading));
}

export function docCoverageProblems(document: { paths?: Record<string, Record<string, unknown>> }, markdown: string): string[] {
  const sections = markdownSections(markdown);
  const problems: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, op] of Object.entries(item ?? {})) {
      if (!HTTP_METHODS.includes(method)) continue;
      const route = `${method.toUpperCase()} ${path}`;
      const section = routeSection(sections, method, path);
      if (section === undefined) {
        problems.push(`${route}: no section (a heading with "${route}") in docs/API.md`);
        continue;
      }
      const responses = ((op as { responses?: Record<string, unknown> }).responses ?? {}) as Record<string, unknown>;
      for (const status of Object.keys(responses)) {
        if (!new RegExp(`(?<![0-9.])${escape(status)}(?![0-9])`).test(section.body)) {
          problems.push(`${route}: status ${status} is declared but not mentioned in its section "${section.heading}"`);
        }
      }
    }
  }
  return problems;
}
