import { readFileSync } from 'node:fs';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The request bodies of the README's ```jsonc block that starts with `// <marker>`, one a line. */
export function readmeExamples(marker: string): string[] {
  const block = readme.split('```jsonc').find((b) => b.trimStart().startsWith(`// ${marker}`));
  if (!block) throw new Error(`README has no \`\`\`jsonc block starting with // ${marker}`);
  return block
    .split('```')[0]!
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'));
}
