"""Result certificates: a won game's signed statement, and the public keys to check it with."""

from __future__ import annotations

from typing import Any

import jwt
from litestar import Controller, Request, Response, get
from litestar.datastructures import State

from pyramide.service.accounts import Player
from pyramide.service.games.certificates import Certificates, SigningKeys
from pyramide.service.games.schemas import Certificate, JsonWebKeySet
from pyramide.service.http.injection import Injected
from pyramide.service.http.params import GameIdText, game_id_of
from pyramide.service.http.responses import problems

JWKS_MAX_AGE_S = 3600
"""How long a verifier may cache the key set: a new key is published with its first certificate's signer, so a
verifier that meets an unknown ``kid`` fetches the set again."""


class CertificateController(Controller):
    path = "/v1/games"
    tags = ["games"]

    @get(
        "/{game_id:str}/certificate",
        operation_id="getGameCertificate",
        summary="A won game's result certificate: a compact JWS anyone can verify",
        description="Signed with EdDSA (Ed25519) by the key its `kid` names in `/.well-known/jwks.json`; the payload"
        " holds the deal's code, the rules, the record, moves, elapsed time, start and finish, the player's shown"
        " name, the challenge and its tier. Replaying the record from the code reaches the win (`pyramide verify`)."
        " Owner only (404 for another player's game); 409 `game_not_won` for a game not won; 409"
        " `certificate_sealed` for a challenge game until its challenge closes (the code and the record would show"
        " the face-down cards). Signed anew on each request (`signed_at`), with the key in use then.",
        responses=problems(400, 401, 403, 404, 409),
    )
    async def certificate(
        self, request: Request[Player, str, State], game_id: GameIdText, certificates: Injected[Certificates]
    ) -> Certificate:
        token = await certificates.certificate(request.user, game_id_of(game_id))
        header: dict[str, Any] = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
        return Certificate.model_validate({"certificate": token, "kid": header["kid"], "claims": claims})


@get(
    "/.well-known/jwks.json",
    operation_id="getSigningKeys",
    tags=["games"],
    summary="The public keys result certificates are signed with (a JWK Set)",
    description="Every key whose certificates verify, the one signing now first. Cacheable for an hour; fetch it"
    " again on meeting a `kid` it does not hold.",
    responses=problems(),
    exclude_from_auth=True,
    security=[],
)
async def signing_keys(signing: Injected[SigningKeys]) -> Response[JsonWebKeySet]:
    keys = JsonWebKeySet.model_validate(await signing.jwks())
    return Response(keys, headers={"Cache-Control": f"public, max-age={JWKS_MAX_AGE_S}"})
