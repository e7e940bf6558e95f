"""The `decimals`, `p_value`, `p_clause`, `percent`, `money` and `count` template filters, built into every template (settings.TEMPLATES):
pages write figures by the same rule as the downloads' Markdown (`quorum.numbers`)."""
from django import template

from quorum import numbers

register = template.Library()


@register.filter
def decimals(value, places=3):
    """`{{ score|decimals:3 }}`: half up from the figure's shortest decimal form, as the reports."""
    return numbers.decimals(value, int(places))


@register.filter
def p_value(value):
    """`{{ p|p_value }}`: "< 0.001" below the floor, else three decimals, as the reports."""
    return numbers.p_value(value)


@register.filter
def p_clause(value):
    """`{{ p|p_clause }}`: "p < 0.001" or "p = 0.012", inside a sentence."""
    return numbers.p_clause(value)


@register.filter
def percent(value, places=0):
    """`{{ level|percent }}`: 0.95 as "95%", as the reports."""
    return numbers.percent(value, int(places))


@register.filter
def money(value):
    """`{{ amount|money }}`: "$1,234.50", cents half up, as the crowd section and its notes write amounts."""
    return numbers.money(value)


@register.filter
def count(value):
    """`{{ n|count }}`: 14748 as "14,748", as the import command writes a corpus's size."""
    return numbers.count(value)
