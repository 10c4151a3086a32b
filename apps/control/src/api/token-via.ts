/** How an action made with an API token names it on the audit trail: its name and its first characters. */
export const tokenVia = (token: { name: string; hint: string }) => `token ${token.name} (${token.hint}…)`;
