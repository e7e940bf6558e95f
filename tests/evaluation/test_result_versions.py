"""The one rule for results stored by an older method (`evaluation.stats.versions`): which are
current, and the words every output of the three kinds (ratings results, pairwise ranking, FED
results) says first when they are not."""
import pytest

from evaluation.stats import versions

KINDS = [versions.RATINGS, versions.PAIRWISE, versions.FED]


@pytest.mark.parametrize("kind", KINDS)
def test_only_a_result_of_an_older_method_is_out_of_date(kind):
    assert versions.standing(kind, kind.current - 1).older
    for current in (kind.current, None, "7", 1.5):  # today's, or a result that names no method: not judged
        found = versions.standing(kind, current)
        assert found.current and not found.older and found.note("then") == ""


def test_each_kind_says_the_same_sentence_with_its_own_subject_and_what_may_be_wrong():
    ratings = versions.standing(versions.RATINGS, 6).note("Compute the results again for today's")
    assert ratings == (
        "These results were computed with an older method (report format 6; the current one is 7): their rank ranges "
        "may contradict the pairwise table's Holm-adjusted decisions. Compute the results again for today's"
    )
    pairwise = versions.standing(versions.PAIRWISE, 0).note("It is being computed again")
    assert pairwise == (
        "This ranking was computed with an older method (method 0; the current one is 2): its rank ranges may contradict "
        "the Holm-adjusted pairwise decisions. It is being computed again"
    )
    fed = versions.standing(versions.FED, 0).note("new ones are being computed")
    assert fed == "These results were computed with an older method (method 0; the current one is 1): new ones are being computed"
    assert versions.standing(versions.FED, 0).note() == "These results were computed with an older method (method 0; the current one is 1)"
