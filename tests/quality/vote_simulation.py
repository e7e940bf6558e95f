"""Votes with a known Krippendorff's alpha, for measuring how often the vote agreement's interval
(`selectors.quality.vote_alpha`: nominal alpha over the parts voted on, resampled by response) covers it.

The model is `alpha_simulation`'s, on two values (for, against) and with the parts of a response tied
together as they are in a job: each part has a true verdict, "against" with probability `against`;
each voter gives a part its true verdict with probability r, or else a fresh guess ("against" with
the same probability). Two votes on one part are then both true with probability r^2 and otherwise
two independent draws from the marginal, so the population alpha is r^2 whatever ties the parts of
one response together (alpha is a ratio of expectations over single parts). And they are tied, as
the vote agreement's clusters assume: a response's parts share their truth with probability `halo`,
and each voter judges the whole response with probability `halo` (one knowing-or-guessing, one
guess, for all its parts; a vote on the whole response decides every part) and each part on its
own otherwise. `test_vote_coverage` checks the alpha on a large draw. Pure: numpy only, no Django.
"""
import numpy as np

VALUES = np.array([0.0, 1.0])  # for, against: the vote agreement's value domain
VOTERS = 3  # votes a response, the default of the voting settings
AGAINST = 0.15  # share of parts voted down at random: most collected responses are usable
HALO = 0.8


def simulated_votes(rng, responses: int, true_alpha: float, parts: int = 1, voters: int = VOTERS, against: float = AGAINST,
                    halo: float = HALO) -> tuple[np.ndarray, np.ndarray]:
    """(value counts [responses * parts, (for, against)], the response of each part) of one simulated
    job whose population vote alpha is `true_alpha`."""
    shape = (responses, parts)

    def tied(per_response: np.ndarray, per_part: np.ndarray, whole: np.ndarray) -> np.ndarray:
        return np.where(whole[:, None], per_response[:, None], per_part)

    truth = tied(rng.random(responses) < against, rng.random(shape) < against, rng.random(responses) < halo)
    knows = np.sqrt(true_alpha)
    votes_against = np.zeros(shape, dtype=int)
    for _voter in range(voters):
        whole = rng.random(responses) < halo
        knowing = tied(rng.random(responses) < knows, rng.random(shape) < knows, whole)
        guess = tied(rng.random(responses) < against, rng.random(shape) < against, whole)
        votes_against += np.where(knowing, truth, guess)
    votes_against = votes_against.ravel()
    return np.stack([voters - votes_against, votes_against], axis=1), np.repeat(np.arange(responses), parts)


def vote_data_sets(rng, design, reps: int):
    """`reps` simulated jobs of `design` (responses, parts, true alpha, share against) as (counts, clusters)."""
    responses, parts, true_alpha, against = design
    for _ in range(reps):
        yield simulated_votes(rng, responses, true_alpha, parts=parts, against=against)
