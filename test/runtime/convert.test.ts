/**
 * Datetimes read from the database as text (SQLite) are answered as `new Date(text).toISOString()`
 * gives them; the text already in that form skips the parser (`isIsoUtc`). Both ways must agree.
 */
import { asDateTime, isIsoUtc } from '../../runtime/core/convert';

/** What asDateTime answered before it knew the form: the parser's answer, or the text when it is no date. */
function parsed(text: string): string {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toISOString();
}

describe('asDateTime', () => {
  it.each([
    '2024-07-09T01:16:19.674Z',
    '0000-01-01T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
    '2024-02-29T12:00:00.000Z',
    '2000-02-29T00:00:00.000Z',
  ])('answers %s, already in toISOString form, as it is', (text) => {
    expect(isIsoUtc(text)).toBe(true);
    expect(asDateTime(text)).toBe(text);
    expect(parsed(text)).toBe(text);
  });

  it.each([
    ['2023-02-29T00:00:00.000Z', '2023-03-01T00:00:00.000Z'],
    ['1900-02-29T00:00:00.000Z', '1900-03-01T00:00:00.000Z'],
    ['2023-04-31T10:00:00.000Z', '2023-05-01T10:00:00.000Z'],
    ['2023-01-01T24:00:00.000Z', '2023-01-02T00:00:00.000Z'],
    ['2023-01-01 10:00:00', new Date('2023-01-01 10:00:00').toISOString()],
    ['2023-01-01T10:00:00Z', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01T10:00:00.000+02:00', '2023-01-01T08:00:00.000Z'],
    ['2023-13-01T00:00:00.000Z', '2023-13-01T00:00:00.000Z'],
    ['2023-01-01T23:60:00.000Z', '2023-01-01T23:60:00.000Z'],
    ['not a date', 'not a date'],
  ])('leaves %s, in another form or naming no such time, to the parser', (text, expected) => {
    expect(isIsoUtc(text)).toBe(false);
    expect(asDateTime(text)).toBe(expected);
    expect(parsed(text)).toBe(expected);
  });

  it('agrees with the parser on strings one character away from the form', () => {
    const base = '2024-02-29T23:59:59.999Z';
    const replacements = ['0', '1', '2', '3', '5', '6', '9', '-', ':', '.', 'T', 'Z', ' ', 'x', '+'];
    let checked = 0;
    for (let i = 0; i < base.length; i++) {
      for (const c of replacements) {
        const text = base.slice(0, i) + c + base.slice(i + 1);
        if (isIsoUtc(text)) expect(parsed(text)).toBe(text);
        expect(asDateTime(text)).toBe(parsed(text));
        checked++;
      }
    }
    expect(checked).toBe(base.length * replacements.length);
  });

  it('answers a Date and a number of milliseconds by toISOString', () => {
    expect(asDateTime(new Date(Date.UTC(2024, 6, 9, 1, 16, 19, 674)))).toBe('2024-07-09T01:16:19.674Z');
    expect(asDateTime(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
