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
export function memoryTokenStore(token?: string | null): TokenStore;
/**
 * A token kept in a Web Storage (`localStorage`: shared by a browser's tabs and
 * kept across restarts, so a closed tab resumes its seat), or anything with
 * getItem, setItem and removeItem.
 * @param {{getItem(key: string): string | null, setItem(key: string, value: string): void, removeItem(key: string): void}} storage
 * @param {string} [key]
 * @returns {TokenStore}
 */
export function storageTokenStore(storage: {
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
}, key?: string): TokenStore;
/** localStorage where there is one (a browser), else memory. */
export function defaultTokenStore(): TokenStore;
export type TokenStore = {
    /**
     * the stored token, if any
     */
    get: () => string | null | Promise<string | null>;
    /**
     * keep this token
     */
    set: (token: string) => void | Promise<void>;
    /**
     * forget it
     */
    clear: () => void | Promise<void>;
};
