import { configJsonSchema } from './json-schema';

type Json = Record<string, any>;

/** Renders the configuration reference (markdown table) from the JSON Schema, so the docs never drift from the code. */
export function configReferenceMarkdown(): string {
  const root = configJsonSchema() as Json;
  const rows: string[] = [];
  const walk = (node: Json, path: string, required: boolean) => {
    const n = resolve(node, root);
    const variants = (n.anyOf ?? n.oneOf) as Json[] | undefined;
    const objectVariants = (variants ?? []).map((v) => resolve(v, root)).filter((v) => v.type === 'object' && v.properties);
    if (n.type === 'object' && n.properties) {
      if (path) rows.push(row(path, 'object', n, required));
      const req = new Set<string>(n.required ?? []);
      for (const [k, v] of Object.entries(n.properties as Json)) walk(v as Json, path ? `${path}.${k}` : k, req.has(k));
      return;
    }
    if (n.type === 'array' && n.items && resolve(n.items, root).type === 'object') {
      rows.push(row(path, 'list', n, required));
      walk(n.items, `${path}[]`, true);
      return;
    }
    rows.push(row(path, typeOf(n, root), n, required));
    for (const objectVariant of objectVariants) {
      const req = new Set<string>(objectVariant.required ?? []);
      for (const [k, v] of Object.entries(objectVariant.properties as Json)) walk(v as Json, `${path}.${k}`, req.has(k));
    }
  };
  walk(root, '', true);
  return ['| key | type | required | default | description |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
}

function resolve(n: Json, root: Json): Json {
  if (n?.$ref && typeof n.$ref === 'string') {
    const parts = n.$ref.replace(/^#\//, '').split('/');
    let cur: Json = root;
    for (const p of parts) cur = cur[p];
    return cur;
  }
  return n;
}

function typeOf(n: Json, root: Json): string {
  if (n.format === 'duration') return 'duration';
  if (n.enum) return n.enum.map((e: unknown) => `\`${String(e)}\``).join(' \\| ');
  if (n.const !== undefined) return `\`${String(n.const)}\``;
  const variants = (n.anyOf ?? n.oneOf) as Json[] | undefined;
  if (variants) return [...new Set(variants.map((v) => typeOf(resolve(v, root), root)))].join(' \\| ');
  if (n.type === 'array') return `list of ${typeOf(resolve(n.items ?? {}, root), root)}`;
  if (n.type === 'object' && n.additionalProperties) return 'map';
  return n.type ?? 'any';
}

function row(path: string, type: string, n: Json, required: boolean): string {
  const def = n.default !== undefined ? `\`${JSON.stringify(n.default)}\`` : '';
  const desc = (n.description ?? (n.pattern ? `pattern \`${n.pattern}\`` : '')).replace(/\|/g, '\\|');
  return `| \`${path}\` | ${type} | ${required && n.default === undefined ? 'yes' : ''} | ${def} | ${desc} |`;
}

if (require.main === module) process.stdout.write(configReferenceMarkdown());
