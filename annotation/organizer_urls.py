"""Organizer pages (dashboards for corpora, jobs, imports, exports). Included under /organize/."""
from django.urls import path

from . import organizer_views as views

app_name = "organizer"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("corpora/upload/", views.corpus_upload, name="corpus-upload"),
    path("imports/<int:pk>/", views.import_run, name="import-run"),
    path("jobs/new/", views.job_new, name="job-new"),
    path("jobs/<int:pk>/", views.job_detail, name="job"),
    path("jobs/<int:pk>/export/", views.job_export, name="job-export"),
    path("jobs/<int:pk>/<slug:action>/", views.job_action, name="job-action"),
]
