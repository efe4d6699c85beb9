// A whole game through the SDK @hey-api/openapi-ts generates (its fetch client, the token as the schema's bearer
// security): a player created with only its language, renamed by a PATCH of only its name, a game dealt without a
// body and one under partial rules, a refused move read as the typed Problem, then the plan's game won move by move
// with If-Match.

import { createClient } from "./generated/hey/client";
import { createGame, createPlayer, getGameRecord, playMove, updateCurrentPlayer } from "./generated/hey/sdk.gen";
import type { PlayMoveData, Problem, Snapshot } from "./generated/hey/types.gen";
import { etagOf, plan, report } from "./plan";

type Move = PlayMoveData["body"];

async function main(): Promise<void> {
  const { baseUrl, plan: given } = plan<Move>();
  const client = createClient({ baseUrl, headers: { "Accept-Language": "en" } });
  const player = await createPlayer({ client, body: { locale: "en" } });
  if (player.data === undefined) {
    throw new Error(`createPlayer answered ${player.response.status}`);
  }
  client.setConfig({ auth: player.data.token });
  const renamed = await updateCurrentPlayer({ client, body: { name: "Tessa" } });
  if (renamed.data === undefined) {
    throw new Error(`updateCurrentPlayer with only a name answered ${renamed.response.status}`);
  }
  const partial = await createGame({ client, body: { rules: { cover_pairs: true } } });
  if (partial.data === undefined) {
    throw new Error(`createGame with partial rules answered ${partial.response.status}`);
  }
  const random = await createGame({ client });
  if (random.data === undefined) {
    throw new Error(`createGame without a body answered ${random.response.status}`);
  }
  const dealt = await createGame({ client, body: { code: given.code } });
  if (dealt.data === undefined) {
    throw new Error(`createGame answered ${dealt.response.status}`);
  }
  const game_id = dealt.data.id;
  let etag = etagOf(dealt.response);
  const refused = await playMove({ client, path: { game_id }, headers: { "If-Match": etag }, body: given.illegal });
  if (refused.error === undefined) {
    throw new Error(`the illegal move answered ${refused.response.status}`);
  }
  const problem: Problem = refused.error;
  let etags = 0;
  let snapshot: Snapshot = dealt.data;
  for (const move of given.moves) {
    const played = await playMove({ client, path: { game_id }, headers: { "If-Match": etag }, body: move });
    if (played.data === undefined) {
      throw new Error(`playMove ${JSON.stringify(move)} answered ${played.response.status}`);
    }
    snapshot = played.data;
    etag = etagOf(played.response);
    etags += 1;
  }
  const record = await getGameRecord({ client, path: { game_id } });
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
