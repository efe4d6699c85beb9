"""The names of the leaderboards, which moderation (``accounts``) names as the boards themselves (``stats``) do: a
deal's board is its code, a daily challenge's :func:`challenge_board`."""


def challenge_board(challenge: str) -> str:
    """The name of a daily challenge's leaderboard (a deal code never looks like it)."""
    return f"challenge:{challenge}"
