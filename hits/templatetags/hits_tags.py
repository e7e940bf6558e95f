"""Template tags through which annotation's pages show hits's sections without importing hits.

`{% job_crowd job as crowd %}` gives the crowd section of the organizer's job page its context
(hits.selectors.crowd.crowd_page); the section is hits/templates/hits/_job_crowd.html. A refused
settings form comes back bound in the page's context (`crowd_settings_form`).
"""
from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def job_crowd(context, job) -> dict:
    from ..selectors.crowd import crowd_page

    return crowd_page(job, settings_form=context.get("crowd_settings_form"))
