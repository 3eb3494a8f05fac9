/**
 * Page sizes of the usage queries (`limit` of /admin/usage/requests and
 * /admin/usage/errors). A module without imports, exported on its own
 * (`@mana/llm-usage-store/page-size`), so the gateway's parameter check and
 * the dashboard use these numbers without bundling the store.
 */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
