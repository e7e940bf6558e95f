"""The help text of a stored result's `method` (shown in the admin and the API schema) names where
today's method is declared. It named the constants' old homes after the rule moved to
`evaluation.stats.versions`; here the name it gives must resolve, to the number the writer stores,
so the next move breaks this test instead of leaving the text behind."""
import re

import pytest

from evaluation.fed.selectors import FED_RESULTS_METHOD
from evaluation.models import FedResult, PairwiseReport
from evaluation.stats.versions import PAIRWISE
from tests.test_help_text_names import resolve as _resolve

DOTTED = re.compile(r"`([A-Za-z_][\w.]*\.[\w.]+)`")


@pytest.mark.parametrize(("model", "stored_today"), [(FedResult, FED_RESULTS_METHOD), (PairwiseReport, PAIRWISE.current)])
def test_the_method_help_text_names_where_todays_method_is_declared(model, stored_today):
    help_text = str(model._meta.get_field("method").help_text)
    names = DOTTED.findall(help_text)
    assert names, f"{model.__name__}.method's help text names no place: {help_text!r}"
    for name in names:
        assert _resolve(name) == stored_today, f"{name} in {model.__name__}.method's help text is not today's method"


def test_a_stale_name_is_caught():
    with pytest.raises(ImportError):
        _resolve("fed.results.FED_RESULTS_METHOD")
    with pytest.raises(AttributeError):
        _resolve("evaluation.stats.versions.NOT_A_KIND")
