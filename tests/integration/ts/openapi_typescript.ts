// A whole game through types from openapi-typescript (default options), called with openapi-fetch: a player created
// with only its language, renamed by a PATCH of only its name, a game dealt without a body and one under partial
// rules (keys with a default left out: they must type as optional), a refused move read as the typed Problem, then
// the plan's game won move by move with If-Match.

import createClient from "openapi-fetch";
import type { components, paths } from "./generated/schema";
import { etagOf, plan, report } from "./plan";

type Move = NonNullable<paths["/v1/games/{game_id}/moves"]["post"]["requestBody"]>["content"]["application/json"];
type Problem = components["schemas"]["Problem"];
type Snapshot = components["schemas"]["Snapshot"];

async function main(): Promise<void> {
  const { baseUrl, plan: given } = plan<Move>();
  const client = createClient<paths>({ baseUrl, headers: { "Accept-Language": "en" } });
  const player = await client.POST("/v1/players", { body: { locale: "en" } });
  if (player.data === undefined) {
    throw new Error(`createPlayer answered ${player.response.status}`);
  }
  const headers = { Authorization: `Bearer ${player.data.token}` };
  const renamed = await client.PATCH("/v1/players/me", { headers, body: { name: "Tessa" } });
  if (renamed.data === undefined) {
    throw new Error(`updatePlayer with only a name answered ${renamed.response.status}`);
  }
  const partial = await client.POST("/v1/games", { headers, body: { rules: { cover_pairs: true } } });
  if (partial.data === undefined) {
    throw new Error(`createGame with partial rules answered ${partial.response.status}`);
  }
  const random = await client.POST("/v1/games", { headers });
  if (random.data === undefined) {
    throw new Error(`createGame without a body answered ${random.response.status}`);
  }
  const dealt = await client.POST("/v1/games", { headers, body: { code: given.code } });
  if (dealt.data === undefined) {
    throw new Error(`createGame answered ${dealt.response.status}`);
  }
  const game_id = dealt.data.id;
  let etag = etagOf(dealt.response);
  const refused = await client.POST("/v1/games/{game_id}/moves", {
    headers, params: { path: { game_id }, header: { "If-Match": etag } }, body: given.illegal,
  });
  if (refused.error === undefined) {
    throw new Error(`the illegal move answered ${refused.response.status}`);
  }
  const problem: Problem = refused.error;
  let etags = 0;
  let snapshot: Snapshot = dealt.data;
  for (const move of given.moves) {
    const played = await client.POST("/v1/games/{game_id}/moves", {
      headers, params: { path: { game_id }, header: { "If-Match": etag } }, body: move,
    });
    if (played.data === undefined) {
      throw new Error(`playMove ${JSON.stringify(move)} answered ${played.response.status}`);
    }
    snapshot = played.data;
    etag = etagOf(played.response);
    etags += 1;
  }
  const record = await client.GET("/v1/games/{game_id}/record", { headers, params: { path: { game_id } } });
  if (record.data === undefined) {
    throw new Error(`getGameRecord answered ${record.response.status}`);
  }
  report({
    player: { locale: renamed.data.locale, name: renamed.data.name },
    partialRules: partial.data.rules,
    randomStatus: random.data.status,
    randomCards: random.data.pyramid.length,
    problem: { status: refused.response.status, code: problem.code, type: problem.type },
    status: snapshot.status,
    record: record.data.record,
    etags,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  throw error;
});
