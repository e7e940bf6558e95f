"""Organizer pages (dashboards for corpora, jobs, imports, exports, quality control). Included under /organize/."""
from django.urls import path

from . import organizer_views as views
from . import review_views

app_name = "organizer"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("corpora/upload/", views.corpus_upload, name="corpus-upload"),
    path("imports/<int:pk>/", views.import_run, name="import-run"),
    path("imports/<int:pk>/progress/", views.import_progress, name="import-progress"),
    path("jobs/new/", views.job_new, name="job-new"),
    path("jobs/new/<int:pk>/", views.job_creation, name="job-creation"),
    path("jobs/new/<int:pk>/progress/", views.job_creation_progress, name="job-creation-progress"),
    path("jobs/new/<int:pk>/retry/", views.job_creation_retry, name="job-creation-retry"),
    path("jobs/<int:pk>/", views.job_detail, name="job"),
    path("jobs/<int:pk>/export/", views.job_export, name="job-export"),
    path("exports/<int:pk>/progress/", views.export_progress, name="export-progress"),
    # Quality control; listed before the catch-all state action below.
    path("jobs/<int:pk>/voting/", views.job_voting, name="job-voting"),
    path("jobs/<int:pk>/quality/", views.job_quality, name="job-quality"),
    path("jobs/<int:pk>/gold/", views.job_gold, name="job-gold"),
    path("jobs/<int:pk>/review/", views.job_review, name="job-review"),
    path("jobs/<int:pk>/review/decide/", views.job_review_bulk, name="job-review-bulk"),
    path("jobs/<int:pk>/review/decisions/", review_views.job_review_decisions, name="job-review-decisions"),
    path("jobs/<int:pk>/review/undo/", review_views.job_review_undo, name="job-review-undo"),
    path("review/view/", review_views.review_view_choice, name="review-view"),
    path("jobs/<int:pk>/preview/", review_views.job_preview, name="job-preview"),
    path("jobs/<int:pk>/preview/<int:position>/check/", review_views.job_preview_check, name="job-preview-check"),
    path("jobs/<int:pk>/preview/<int:position>/chat/", review_views.job_preview_chat, name="job-preview-chat"),
    path("jobs/<int:pk>/flags/", views.job_flags, name="job-flags"),
    path("jobs/<int:pk>/flags/progress/", views.job_flags_progress, name="job-flags-progress"),
    path("jobs/<int:pk>/subset.csv", views.job_subset, name="job-subset"),
    path("responses/<int:pk>/readings/<int:index>/", views.reading_audio, name="reading-audio"),
    path("responses/<int:pk>/override/", views.response_override, name="response-override"),
    path("team/", views.team, name="team"),
    path("team/add/", views.team_add, name="team-add"),
    path("team/<int:pk>/active/", views.team_active, name="team-active"),
    path("workers/<int:pk>/", views.worker_detail, name="worker"),
    path("workers/<int:pk>/unblock/<int:job_pk>/", views.worker_unblock, name="worker-unblock"),
    path("jobs/<int:pk>/edit/", views.job_edit, name="job-edit"),
    path("jobs/<int:pk>/delete/", views.job_delete, name="job-delete"),
    path("jobs/<int:pk>/<slug:action>/", views.job_action, name="job-action"),
]
