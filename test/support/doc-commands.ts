import { readFileSync } from 'node:fs';

/** The documents whose shell commands a new user copies: each must work as written. */
export const COMMAND_DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'docs/partner-guide.md',
  'docs/operations.md',
  'docs/performance.md',
  'docs/wallet.md',
  'docs/vignette-ro.md',
];

export interface ShellBlock {
  file: string;
  /** The block's commands: comments (` # …` after two spaces, or a whole line) taken off. */
  lines: string[];
  /** Run whole, in one shell (see isSession), after the assignments of the file's earlier blocks it uses. */
  session: boolean;
}

const ASSIGNMENT = /^[A-Z_]+=(?:\$\(.*\)|"[^"]*"|'[^']*'|[^\s;]+)\s*(?:;|$)/;

const root = new URL('../../', import.meta.url);

/** Every ```sh block of the documents, in order. */
export function shellBlocks(files = COMMAND_DOCS): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  for (const file of files) {
    const text = readFileSync(new URL(file, root), 'utf8');
    // A block of assignments alone (`A="Authorization: …"; S=…`) sets variables for the file's later blocks.
    const prelude: string[] = [];
    for (const m of text.matchAll(/^[ \t]*```sh\n([\s\S]*?)^[ \t]*```/gm)) {
      const lines = m[1]!
        .replace(/\\\n\s*/g, '')
        .split('\n')
        .map((l) => l.replace(/\s{2,}#\s.*$/, '').trim())
        .filter((l) => l !== '' && !l.startsWith('#'));
      if (lines.every((l) => ASSIGNMENT.test(l))) {
        prelude.push(...lines);
        continue;
      }
      const names = prelude.flatMap((l) => [...l.matchAll(/(?:^|; *)([A-Z_]+)=/g)].map((v) => v[1]!));
      const usesPrelude = lines.some((l) => names.some((n) => new RegExp(`\\$\\{?${n}\\b`).test(l)));
      blocks.push({
        file,
        lines: usesPrelude ? [...prelude, ...lines] : lines,
        session: usesPrelude || lines.some((l) => ASSIGNMENT.test(l)),
      });
    }
  }
  return blocks;
}

/**
 * A block run whole, in one shell, in order: it sets shell variables that its later lines use
 * (`DRAFT=$(npm run -s call -- …)`, `SIGNATURE=$(… | openssl …)`), or uses those of an earlier block.
 */
export function isSession(block: ShellBlock): boolean {
  return block.session;
}

/** `npm run [-s] <script> …` with optional `VAR=value` before it: the script's name, else null. */
export function npmScript(line: string): string | null {
  const m = /^(?:[A-Z_]+=\S+\s+)*npm run(?: -s)? ([\w:-]+)/.exec(line);
  return m ? m[1]! : null;
}

/** The arguments after `npm run [-s] <script> --`, split as a shell would split simple quoting. */
export function scriptArgs(line: string): string[] {
  const rest = line.replace(/^.*?npm run(?: -s)? [\w:-]+(?: --)?\s*/, '');
  return [...rest.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}
