/** An unresolved `${VAR}` reference. */
export interface MissingVariable {
  name: string;
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in a string from the given environment.
 * `$${` escapes a literal `${`. Returns the result and the names of variables that were missing without a default.
 */
export function interpolateEnv(input: string, env: NodeJS.ProcessEnv): { value: string; missing: MissingVariable[] } {
  const missing: MissingVariable[] = [];
  const value = input.replace(/\$?\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (match, name: string, def: string | undefined) => {
    if (match.startsWith('$$')) return match.slice(1);
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    if (def !== undefined) return def;
    missing.push({ name });
    return '';
  });
  return { value, missing };
}
