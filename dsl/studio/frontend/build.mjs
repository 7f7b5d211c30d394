// Builds ../static/studio.js (minified, one file) and ../static/studio.js.LICENSES.txt
// (the licence of every package the bundle holds). Deterministic: the same lockfile and
// sources give the same bytes (a test rebuilds in a copy and compares).
import * as esbuild from "esbuild";
import { readFileSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "static");
const pkg = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));

const result = await esbuild.build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  metafile: true,
  write: false,
  banner: {
    js: `/*! Scenarist Studio ${pkg.version}: built from dsl/studio/frontend by esbuild; ` +
        "the licences of the packages it holds are in studio.js.LICENSES.txt */",
  },
});
writeFileSync(join(out, "studio.js"), result.outputFiles[0].contents);

// the packages whose code is in the bundle, from the inputs esbuild read
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const parts = input.split(/[\\/]/);
  const i = parts.lastIndexOf("node_modules");
  if (i < 0) continue;
  const name = parts[i + 1].startsWith("@") ? `${parts[i + 1]}/${parts[i + 2]}` : parts[i + 1];
  packages.add(name);
}
let text = `Scenarist Studio ${pkg.version}: third-party software in studio.js\n`;
for (const name of [...packages].sort()) {
  const dir = join(here, "node_modules", ...name.split("/"));
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).sort().find((f) => /^(licen[cs]e|copying)/i.test(f));
  text += `\n${"=".repeat(78)}\n${meta.name} ${meta.version} (${meta.license})\n`;
  text += `${meta.repository?.url ?? meta.repository ?? meta.homepage ?? ""}\n\n`;
  text += file ? readFileSync(join(dir, file), "utf8").trim() + "\n" : "(no licence file)\n";
}
writeFileSync(join(out, "studio.js.LICENSES.txt"), text);
console.log(`studio.js: ${result.outputFiles[0].contents.length} bytes, ${packages.size} packages`);
