"""The order in which a chat job's dialogs are handed out (pure, no Django).

Workers take a job's items in position order, so the order is the design of a partial run. It
interleaves systems and goals:

- systems take turns: in every block of S consecutive positions (S systems) each system has one
  dialog, so at any moment of a run the systems' dialog counts differ by at most one;
- goals are spread: the same goal comes back only about every G positions (G goals), never at the
  next position when there are 3 goals or more;
- each (goal, system) pair still gets exactly `dialogs_per_goal` dialogs.

Position p of a round (G x S positions) pairs system p mod S with goal (p + c) mod G, c being the
cycle p // lcm(G, S): the shift per cycle makes every pair occur once a round, also when G and S
share a factor. Goals and systems are relabelled by a seeded shuffle each round, so the same seed
gives the same order and another seed another one.
"""
import math
import random

#: How many shuffles of a round's goals are tried to keep a goal away from the end of the last round.
_TRIES = 50


def _round(goal_count: int, system_count: int) -> list[tuple[int, int]]:
    cycle = math.lcm(goal_count, system_count)
    return [((p + p // cycle) % goal_count, p % system_count) for p in range(goal_count * system_count)]


def _gap(previous: list[int], upcoming: list[int]) -> int:
    """The shortest distance between equal goals across the boundary of two rounds."""
    best = len(previous) + len(upcoming)
    for i, goal in enumerate(upcoming):
        for back, earlier in enumerate(reversed(previous)):
            if earlier == goal:
                best = min(best, i + back + 1)
                break
    return best


def interleave(goal_count: int, system_count: int, dialogs_per_goal: int, seed: int) -> list[tuple[int, int]]:
    """[(goal index, system index)] for every dialog of the job, in the order they are handed out."""
    if goal_count < 1 or system_count < 1 or dialogs_per_goal < 1:
        return []
    rng = random.Random(seed)
    shape = _round(goal_count, system_count)
    order: list[tuple[int, int]] = []
    for _ in range(dialogs_per_goal):
        systems = list(range(system_count))
        rng.shuffle(systems)
        previous = [g for g, _s in order[-goal_count:]]
        best: list[int] | None = None
        for _try in range(_TRIES if previous else 1):
            goals = list(range(goal_count))
            rng.shuffle(goals)
            if best is None or _gap(previous, [goals[g] for g, _s in shape[:goal_count]]) > _gap(
                previous, [best[g] for g, _s in shape[:goal_count]]
            ):
                best = goals
        assert best is not None
        order += [(best[g], systems[s]) for g, s in shape]
    return order
