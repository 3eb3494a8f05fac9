/**
 * The admin key, kept for this browser tab's session only (sessionStorage:
 * gone when the tab closes, never in localStorage or a cookie).
 */
const STORAGE_KEY = 'mana-llm-admin-key';

export function adminKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the user signs in again on each load
  }
}

export function keepAdminKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetAdminKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
