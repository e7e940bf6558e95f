from django.urls import path

from . import organizer_views, views

app_name = "hits"

urlpatterns = [
    path("mturk/<int:job_id>/", views.mturk_entry, name="mturk-entry"),
    path("prolific/<int:job_id>/", views.prolific_entry, name="prolific-entry"),
    path("done/<str:token>/", views.done, name="done"),
    # Organizer actions of the crowd section on the job page (POST only).
    path("jobs/<int:pk>/settings/", organizer_views.crowd_settings, name="job-settings"),
    path("jobs/<int:pk>/launch/", organizer_views.crowd_launch, name="job-launch"),
    path("jobs/<int:pk>/settle/", organizer_views.crowd_settle, name="job-settle"),
    path("jobs/<int:pk>/bonus/", organizer_views.crowd_bonus, name="job-bonus"),
]
