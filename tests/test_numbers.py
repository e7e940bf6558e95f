"""One rule for writing a figure (`quorum.numbers`): half up from the value a download carries."""
from decimal import Decimal

from django.template import Context, Template

from quorum import numbers


def test_a_half_is_rounded_up_from_the_figure_as_the_download_writes_it():
    mean = 9997 / 2000  # 4.9985, stored as 4.99849999...: format() would write 4.998
    assert format(mean, ".3f") == "4.998"
    assert repr(mean) == "4.9985"
    assert numbers.decimals(mean) == "4.999"
    assert numbers.decimals(-9997 / 2000) == "-4.999"
    assert numbers.decimals(0.12345, 4) == "0.1235"
    assert numbers.decimals(2, 3) == "2.000"  # a clipped bound comes as the scale's integer end
    assert numbers.decimals(-0.0001) == "0.000"  # no sign on a zero
    assert numbers.decimals(None) == ""
    assert numbers.decimals(float("nan")) == numbers.decimals(float("inf")) == "n/a"


def test_a_p_value_is_written_one_way():
    assert numbers.p_value(0.0) == numbers.p_value(0.00099) == "< 0.001"
    assert numbers.p_value(0.001) == "0.001"
    assert numbers.p_value(0.0125) == "0.013"
    assert numbers.p_value(None) == "n/a"
    assert numbers.p_clause(0.0002) == "p < 0.001"
    assert numbers.p_clause(0.25) == "p = 0.250"
    assert numbers.percent(0.95) == "95%"


def test_the_template_filters_are_the_same_rule_without_a_load():
    rendered = Template("{{ x|decimals:3 }} {{ p|p_value }} {{ q|p_clause }} {{ level|percent }}").render(
        Context({"x": 9997 / 2000, "p": 0.0004, "q": 0.04, "level": 0.9})
    )
    assert rendered == "4.999 &lt; 0.001 p = 0.040 90%"


def test_a_csv_carries_the_full_value_that_the_page_rounds():
    assert numbers.data_cell(9997 / 2000) == "4.9985"
    assert numbers.data_cell(1 / 3) == repr(1 / 3)
    assert numbers.data_cell(3) == 3


def test_an_amount_of_money_is_written_in_dollars_and_cents_with_thousands_separated():
    # SQLite sums a DecimalField without its trailing zero: the crowd section read "$8.5 reserved".
    assert numbers.money(Decimal("8.5")) == "$8.50"
    assert numbers.money(Decimal("7")) == "$7.00"
    assert numbers.money(Decimal("184125")) == "$184,125.00"
    assert numbers.money(2.675) == "$2.68"  # half up from the figure, as decimals()
    assert numbers.money(Decimal("-3.5")) == "-$3.50"
    assert numbers.money(None) == ""
    assert Template("{{ amount|money }}").render(Context({"amount": Decimal("1234.5")})) == "$1,234.50"


def test_a_count_is_written_with_thousands_separated():
    assert numbers.count(14748) == "14,748"
    assert numbers.count(999) == "999"
    assert numbers.count(None) == ""
    assert Template("{{ n|count }}").render(Context({"n": 1234567})) == "1,234,567"
