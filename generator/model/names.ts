/**
 * Name conversions, in one place so that every stage derives the same identifiers.
 */
import pluralize from 'pluralize';

/** `BlogPost` → `blog_post`. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** `BlogPost` → `blog post` (the default verbose name). */
export function wordsOf(name: string): string {
  return snakeCase(name).replace(/_/g, ' ');
}

/**
 * The English plural of a name in words, by its last word: `blog entry` → `blog entries`,
 * `shelf` → `shelves`, `person` → `people`. Every derived plural (table, route, verbose name) comes
 * from here.
 */
export function pluralOf(words: string): string {
  const match = /^(.*?)([A-Za-z]+)$/.exec(words);
  return match ? match[1] + pluralize.plural(match[2]) : `${words}s`;
}

/** `blog_post` / `blog post` → `BlogPost`. */
export function pascalCase(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/** `blog_post` → `blogPost`. */
export function camelCase(name: string): string {
  const p = pascalCase(name);
  return p ? p[0].toLowerCase() + p.slice(1) : p;
}

/** A JavaScript string literal (single-quoted), for emitting spec strings into code. */
export function str(value: string): string {
  return `'${value
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')}'`;
}

/** A JSDoc-safe single line. */
export function docLine(text: string): string {
  return text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ').trim();
}

/** Any JSON value as a TypeScript literal. */
export function literal(value: unknown): string {
  if (typeof value === 'string') return str(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : str(k)}: ${literal(v)}`,
    );
    return entries.length ? `{ ${entries.join(', ')} }` : '{}';
  }
  throw new Error(`cannot emit ${typeof value} as a literal`);
}
