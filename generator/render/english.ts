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
