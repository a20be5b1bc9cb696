// ESLint for the sample browser client (clients/sample_js) and the JavaScript
// client library (clients/js): plain ES modules, no build step. Run by `make lint`
// from the repository root:
//   tools/node/node_modules/.bin/eslint --config tools/node/eslint.config.mjs clients/sample_js clients/js
import js from "@eslint/js";
import globals from "globals";

export default [
  // The page's copy of the library is checked against its original (server.devtools.client_facts).
  { ignores: ["clients/sample_js/tali/**", "clients/js/node_modules/**", "clients/js/types/**"] },
  { files: ["clients/sample_js/**/*.js", "clients/js/**/*.js", "clients/js/**/*.mjs"] },
  js.configs.recommended,
  {
    files: ["clients/sample_js/**/*.js", "clients/js/**/*.js", "clients/js/**/*.mjs"],
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
    // The library runs in browsers and in Node 20+; its tests and tools in Node.
    files: ["clients/js/**/*.js", "clients/js/**/*.mjs"],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
];
