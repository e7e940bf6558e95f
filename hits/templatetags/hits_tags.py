"""Template tags through which annotation's pages show hits's sections without importing hits.

`{% job_crowd job as crowd %}` gives the crowd section of the organizer's job page its context
(hits.selectors.crowd.crowd_page, with the section's forms); the section is hits/templates/hits/_job_crowd.html. A refused
settings form comes back bound in the page's context (`crowd_settings_form`); the results of the
section's last action are taken from the session (hits.web.section_results) and shown in the section.
"""
from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def job_crowd(context, job) -> dict:
    from ..selectors.crowd import crowd_page
    from ..web import section_results
    from ..web.forms import BonusForm, CrowdSettingsForm, SettleForm

    page = crowd_page(job)
    config = page["config"]
    return {
        **page,
        # A refused settings form comes back bound, with its errors, instead of the saved settings.
        "settings_form": context.get("crowd_settings_form")
        or CrowdSettingsForm(initial=CrowdSettingsForm.initial_for(config), auto_id="id_crowd_%s"),
        "settle_form": SettleForm(auto_id="id_settle_%s"),
        "bonus_form": BonusForm(auto_id="id_bonus_%s"),
        # What the section's last action did, shown here where the action sent the organizer back to.
        "results": section_results.take(context.get("request"), job.pk),
    }
