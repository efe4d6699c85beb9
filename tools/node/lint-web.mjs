// ESLint for the web client (web/*.js at the top of the repository), with the pinned eslint: the recommended
// rules, browser globals (so no-undef catches a typo), no unused variables. Prints the findings and exits 1 on any
// warning or error. Run: node tools/node/lint-web.mjs (tests/unit/test_web_lint.py does, in scripts/test).
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import { ESLint } from "eslint";
import globals from "globals";

const root = fileURLToPath(new URL("../..", import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [
    js.configs.recommended,
    {
      files: ["web/*.js"],
      languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
      rules: { "no-undef": "error", "no-unused-vars": "error" },
    },
  ],
});
const results = await eslint.lintFiles(["web/*.js"]);
const formatter = await eslint.loadFormatter("stylish");
process.stdout.write(await formatter.format(results));
const findings = results.reduce((sum, r) => sum + r.errorCount + r.warningCount, 0);
console.log(`${results.length} files, ${findings} findings`);
process.exit(findings || results.length === 0 ? 1 : 0);
