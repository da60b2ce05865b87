// linebreak (foliojs, the Unicode line-breaking algorithm UAX #14) ships no types.
declare module 'linebreak' {
  export interface Break {
    /** Where the line may (or must) end: the index after the break's last character. */
    position: number;
    /** A mandatory break (a newline), not just an opportunity. */
    required: boolean;
  }
  export default class LineBreaker {
    constructor(text: string);
    nextBreak(): Break | null;
  }
}
