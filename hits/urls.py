from django.urls import path

from . import views

app_name = "hits"

urlpatterns = [
    path("mturk/<int:job_id>/", views.mturk_entry, name="mturk-entry"),
    path("prolific/<int:job_id>/", views.prolific_entry, name="prolific-entry"),
    path("done/<str:token>/", views.done, name="done"),
]
