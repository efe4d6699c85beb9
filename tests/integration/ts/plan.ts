// What both programs are handed (argv: the server's URL, then this as JSON) and what they print (one JSON line).
// Written by hand, not generated: the test computes the plan in Python and reads the outcome back.

declare const process: { argv: string[] };

export interface Plan<Move> {
  /** A deal code whose game `moves` win. */
  code: string;
  moves: Move[];
  /** A move the rules refuse at the start of that game (409). */
  illegal: Move;
}

export interface Outcome {
  player: { locale: string; name: string | null };
  partialRules: { recycles: number | null; stock_waste_pairs: boolean; cover_pairs: boolean; strict_win: boolean };
  randomStatus: string;
  randomCards: number;
  problem: { status: number; code: string; type: string };
  status: string;
  record: string;
  etags: number;
}

export function plan<Move>(): { baseUrl: string; plan: Plan<Move> } {
  const [baseUrl, json] = process.argv.slice(2);
  if (baseUrl === undefined || json === undefined) {
    throw new Error("usage: node program.js <base URL> <plan as JSON>");
  }
  return { baseUrl, plan: JSON.parse(json) as Plan<Move> };
}

export function report(outcome: Outcome): void {
  console.log(JSON.stringify(outcome));
}

export function etagOf(response: Response): string {
  const etag = response.headers.get("ETag");
  if (etag === null) {
    throw new Error(`no ETag on ${response.url}`);
  }
  return etag;
}
