// ESLint for the sample browser client (clients/sample_js): plain ES modules
// run by the browser, no build step. Run by `make lint` from the repository root:
//   tools/node/node_modules/.bin/eslint --config tools/node/eslint.config.mjs
import js from "@eslint/js";
import globals from "globals";

export default [
  { files: ["clients/sample_js/**/*.js"] },
  js.configs.recommended,
  {
    files: ["clients/sample_js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
      "no-duplicate-imports": "error",
      "no-shadow": "error",
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
      "no-implicit-globals": "error",
      "no-restricted-properties": ["error",
        { property: "innerHTML", message: "Put text in the page as text nodes (dom.js: el)." },
        { property: "outerHTML", message: "Put text in the page as text nodes (dom.js: el)." },
      ],
      "no-restricted-syntax": ["error",
        { selector: "CallExpression[callee.property.name='insertAdjacentHTML']", message: "Put text in the page as text nodes (dom.js: el)." },
      ],
    },
  },
  {
    // fairness.js runs in Node 20+ too (tests/protocol/fairness_runner.mjs).
    files: ["clients/sample_js/fairness.js"],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
];
