import fs from "node:fs";
import path from "node:path";

/**
 * The links of the project's Markdown pages, read the way a Git host renders them: links in code
 * (fenced blocks, inline code) are text, headings get GitHub's anchors, and `<a id>` marks anchors too.
 */
export type Link = { file: string; line: number; target: string };

/** The page's text with fenced code blocks and inline code blanked out, line numbers kept. */
function withoutCode(text: string): string[] {
  let fence: string | null = null;
  return text.split("\n").map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return "";
    }
    if (marker) {
      fence = marker;
      return "";
    }
    return line.replace(/(`+)[\s\S]*?\1/g, "");
  });
}

export function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  withoutCode(text).forEach((line, index) => {
    for (const match of line.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ file, line: index + 1, target: match[1] });
    for (const match of line.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g)) links.push({ file, line: index + 1, target: match[1] });
  });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Problems with the relative links of `files` (paths from `root`): a missing file, a missing anchor, or a link only one host understands. */
export function brokenLinks(root: string, files: string[]): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(fs.readFileSync(file, "utf8")));
    return anchorCache.get(file)!;
  };
  for (const file of files) {
    const absolute = path.join(root, file);
    for (const link of linksOf(file, fs.readFileSync(absolute, "utf8"))) {
      const where = `${link.file}:${link.line}: ${link.target}`;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
      if (link.target.startsWith("/")) {
        problems.push(`${where}: a root-relative link resolves differently on each Git host; link relative to the page`);
        continue;
      }
      const [pathPart, anchor] = link.target.split("#", 2);
      const target = pathPart === "" ? absolute : path.resolve(path.dirname(absolute), decodeURIComponent(pathPart));
      if (!target.startsWith(root + path.sep) && target !== root) problems.push(`${where}: points outside the repository`);
      else if (!fs.existsSync(target)) problems.push(`${where}: no such file`);
      else if (anchor !== undefined) {
        if (!target.endsWith(".md")) problems.push(`${where}: an anchor into a file that is not Markdown`);
        else if (!anchorsIn(target).has(anchor))
          problems.push(`${where}: no heading or anchor "${anchor}" in ${path.relative(root, target)}`);
      }
    }
  }
  return problems;
}
