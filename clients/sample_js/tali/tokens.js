// A copy of clients/js/src/tokens.js, made by `python -m server.devtools.client_facts`: edit the original.
// Where a client keeps its session token between connections. A token is the
// only way to resume a session: keep it where your platform keeps secrets.

/**
 * @typedef {object} TokenStore
 * @property {() => string | null | Promise<string | null>} get  the stored token, if any
 * @property {(token: string) => void | Promise<void>} set  keep this token
 * @property {() => void | Promise<void>} clear  forget it
 */

/**
 * A token kept in memory only: a restarted program starts a new session.
 * @param {string | null} [token]
 * @returns {TokenStore}
 */
export function memoryTokenStore(token = null) {
  let value = token;
  return {
    get: () => value,
    set: (next) => {
      value = next;
    },
    clear: () => {
      value = null;
    },
  };
}

/**
 * A token kept in a Web Storage (`localStorage`: shared by a browser's tabs and
 * kept across restarts, so a closed tab resumes its seat), or anything with
 * getItem, setItem and removeItem.
 * @param {{getItem(key: string): string | null, setItem(key: string, value: string): void, removeItem(key: string): void}} storage
 * @param {string} [key]
 * @returns {TokenStore}
 */
export function storageTokenStore(storage, key = "tali.token") {
  return {
    get: () => storage.getItem(key),
    set: (token) => storage.setItem(key, token),
    clear: () => storage.removeItem(key),
  };
}

/** localStorage where there is one (a browser), else memory. */
export function defaultTokenStore() {
  const storage = globalThis.localStorage;
  return storage ? storageTokenStore(storage) : memoryTokenStore();
}
