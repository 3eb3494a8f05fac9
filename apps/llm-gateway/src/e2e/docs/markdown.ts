/**
 * What the docs tests read from a Markdown file: its fenced code blocks (with
 * the `<!-- not-runnable: reason -->` mark a block may carry), its headings'
 * anchors as GitHub makes them, and its relative links.
 */

export interface CodeBlock {
  /** Repository-relative path of the file. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string, lowercased (`yaml`, `sh`, `ts`, …; `` for none). */
  readonly lang: string;
  readonly text: string;
  /** The reason given by a `<!-- not-runnable: … -->` comment right before the fence. */
  readonly notRunnable: string | undefined;
}

const NOT_RUNNABLE = /^<!--\s*not-runnable:\s*(.+?)\s*-->$/;

export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (open === null) continue;
    const fence = open[2]!;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence); i++) body.push(lines[i]!);
    let previous = start - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const mark = previous >= 0 ? NOT_RUNNABLE.exec(lines[previous]!.trim()) : null;
    blocks.push({ file, line: start + 1, lang: open[3]!.toLowerCase(), text: body.join('\n'), notRunnable: mark?.[1] });
  }
  return blocks;
}

/** The Markdown outside fenced code blocks, each block blanked to its line breaks (so line numbers hold). */
export function prose(markdown: string): string {
  return markdown.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\s*\2[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a link may name in this file (a repeated heading gets `-1`, `-2`, … as on GitHub). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  readonly target: string;
  readonly line: number;
}

/** Relative links and images (`[x](path#anchor)`, `<img src="path">`); web addresses are left out. */
export function relativeLinks(markdown: string): Link[] {
  const text = prose(markdown);
  const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
  const links: Link[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)|<img[^>]*\ssrc="([^"]+)"/g)) {
    const target = (m[1] ?? m[2])!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    links.push({ target, line: lineOf(m.index) });
  }
  return links;
}
