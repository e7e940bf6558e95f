"""A vote's count in one statement: the round of a vote item, while it is voting, gets the votes
stored for that item counted by the database and written, and comes back locked with the number of
votes its job's policy asks for.

It is the one count of a round's votes: `voting.record_vote` decides on what it stored. Part by part
it is `voting.tally_parts`'s rule: against is the worst part's count when any vote was given part by
part, else the whole-response votes against; for is every vote for or against less that. JSON is read with each database's own functions (jsonb on
PostgreSQL, JSON1 on SQLite); `tests/quality/test_voting_tally.py` holds the two to the Python rule.
"""
from typing import NamedTuple

from django.db import connection

from ..models import Item, QualityPolicy, Response, ReviewRound
from ..task_types.vote import AGAINST, FOR


class Counted(NamedTuple):
    round: ReviewRound
    votes_per_response: int | None  # the reviewed job's policy's; None without a policy

    @property
    def waits_for_more(self) -> bool:
        """Fewer votes than the policy asks for: nothing to decide yet."""
        return self.votes_per_response is not None and self.round.votes_for + self.round.votes_against < self.votes_per_response


_ROUND_FIELDS = ReviewRound._meta.concrete_fields
_ROUND_COLUMNS = [f.attname for f in _ROUND_FIELDS]


def count_votes(vote_item_id: int) -> Counted | None:
    """Count and store the votes of the round voting on `vote_item_id`; None when no round of it is
    voting (settled already, or none). Call with the vote item locked, as `record_vote` is."""
    against, against_params = _against(vote_item_id)
    qn = connection.ops.quote_name
    responses, rounds = qn(Response._meta.db_table), qn(ReviewRound._meta.db_table)
    counted = f"(SELECT COUNT(*) FROM {responses} r WHERE r.{qn('item_id')} = %s AND {_text(qn('answers'), 'vote')} IN (%s, %s))"
    policy = (
        f"(SELECT q.{qn('votes_per_response')} FROM {qn(QualityPolicy._meta.db_table)} q INNER JOIN {qn(Item._meta.db_table)} i "
        f"ON q.{qn('job_id')} = i.{qn('job_id')} WHERE i.{qn('id')} = {rounds}.{qn('item_id')})"
    )
    columns = ", ".join(qn(f.column) for f in _ROUND_FIELDS)
    sql = (
        f"UPDATE {rounds} SET {qn('votes_against')} = {against}, {qn('votes_for')} = {counted} - {against} "
        f"WHERE {qn('vote_item_id')} = %s AND {qn('state')} = %s RETURNING {columns}, {policy}"
    )
    params = [*against_params, vote_item_id, FOR, AGAINST, *against_params, vote_item_id, ReviewRound.State.VOTING]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return Counted(ReviewRound.from_db(connection.alias, _ROUND_COLUMNS, row[:-1]), row[-1])


def _text(column: str, key: str) -> str:
    """A top-level key of a response's answers as text (NULL when missing). `key` is a constant."""
    if connection.vendor == "postgresql":
        return f"(r.{column} ->> '{key}')"
    return f"json_extract(r.{column}, '$.{key}')"


def _against(vote_item_id: int) -> tuple[str, list]:
    """The votes against as an SQL expression: the worst part's, else the whole-response votes."""
    qn = connection.ops.quote_name
    responses, item, answers = qn(Response._meta.db_table), qn("item_id"), qn("answers")
    if connection.vendor == "postgresql":
        per_part = (
            f"SELECT COUNT(*) FILTER (WHERE p.value = to_jsonb(%s::text)) AS n FROM {responses} r CROSS JOIN LATERAL "
            f"jsonb_each(CASE WHEN jsonb_typeof(r.{answers} -> 'parts') = 'object' THEN r.{answers} -> 'parts' ELSE '{{}}'::jsonb END) p "
            f"WHERE r.{item} = %s GROUP BY p.key"
        )
    else:
        per_part = (
            f"SELECT SUM(p.value = %s) AS n FROM {responses} r, json_each(r.{answers}, '$.parts') p "
            f"WHERE r.{item} = %s AND json_type(r.{answers}, '$.parts') = 'object' GROUP BY p.key"
        )
    whole = f"SELECT COUNT(*) FROM {responses} r WHERE r.{item} = %s AND {_text(answers, 'vote')} = %s"
    return f"COALESCE((SELECT MAX(n) FROM ({per_part}) per_part), ({whole}))", [AGAINST, vote_item_id, vote_item_id, AGAINST]
