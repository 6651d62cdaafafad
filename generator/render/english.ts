/**
 * Words of the generated prose (comments and OpenAPI summaries), so that they read as English.
 */

/** Words spelled with a vowel that start with a consonant sound (`a user`, `a one-off`). */
const CONSONANT_SOUND = /^(uni|use|usi|usu|uti|ura|ure|uro|eu|ewe|one|once)/i;
/** Words spelled with a consonant that start with a vowel sound (`an hour`). */
const VOWEL_SOUND = /^(hour|honest|honou?r|heir)/i;

/** The noun with its indefinite article: `an article`, `a user`, `an hour`. */
export function aOrAn(noun: string): string {
  const an = VOWEL_SOUND.test(noun) || (/^[aeiou]/i.test(noun) && !CONSONANT_SOUND.test(noun));
  return `${an ? 'an' : 'a'} ${noun}`;
}

/** `a`, `a and b`, `a, b and c`. */
export function andList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The operations whose OpenAPI summary is the default behaviours' generic one ("List all objects."). */
export type GenericOperation =
  'list' | 'create' | 'retrieve' | 'update' | 'delete' | 'bulk_create' | 'bulk_update' | 'bulk_delete' | 'restore' | 'hard_delete';

/**
 * The MCP tool title of such an operation, naming its resource: `List articles`, `Create an
 * article`. The OpenAPI summary keeps the default behaviours' words; a tool list needs to tell the tools apart.
 */
export function operationTitle(kind: GenericOperation, r: { verboseName: string; verboseNamePlural: string }): string {
  const one = aOrAn(r.verboseName);
  const many = r.verboseNamePlural;
  const titles: Record<GenericOperation, string> = {
    list: `List ${many}`,
    create: `Create ${one}`,
    retrieve: `Retrieve ${one}`,
    update: `Update ${one}`,
    delete: `Delete ${one}`,
    bulk_create: `Create several ${many}`,
    bulk_update: `Update several ${many}`,
    bulk_delete: `Delete several ${many}`,
    restore: `Restore a soft-deleted ${r.verboseName}`,
    hard_delete: `Delete ${one} for good`,
  };
  return titles[kind];
}
