from django.urls import path

from .web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("jobs/<int:job_id>/next/", views.job_next, name="job-next"),
    path("work/<str:token>/", views.work, name="work"),
    path("work/<str:token>/check/", views.work_check, name="work-check"),
    path("work/<str:token>/chat/", views.work_chat, name="work-chat"),
    path("work/<str:token>/readings/<int:index>/", views.work_reading_audio, name="work-reading-audio"),
    path("work/<str:token>/skip/", views.work_skip, name="work-skip"),
    path("work/<str:token>/done/", views.work_done, name="work-done"),
]
