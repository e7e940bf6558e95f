from django.urls import path, register_converter

from . import providers
from .web import organizer_views, views


class ProviderKeyConverter:
    """Matches the key of a registered provider only, so /crowd/jobs/... and /crowd/done/... never reach
    the entry view."""

    regex = "|".join(providers.keys())

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(ProviderKeyConverter, "provider")

app_name = "hits"

urlpatterns = [
    # /crowd/mturk/<job>/ (MTurk's ExternalQuestion URL), /crowd/prolific/<job>/ (the study URL), /crowd/inhouse/<job>/.
    path("<provider:provider>/<int:job_id>/", views.entry, name="entry"),
    path("done/<str:token>/", views.done, name="done"),
    # Organizer actions of the crowd section on the job page (POST only).
    path("jobs/<int:pk>/settings/", organizer_views.crowd_settings, name="job-settings"),
    path("jobs/<int:pk>/settle/", organizer_views.crowd_settle, name="job-settle"),
    path("jobs/<int:pk>/bonus/", organizer_views.crowd_bonus, name="job-bonus"),
]

# What a provider adds under /crowd/ (e.g. Prolific's hook receiver), from its own package.
for _key in providers.keys():
    urlpatterns += providers.get(_key).url_patterns()
