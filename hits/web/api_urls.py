"""Organizer API routes for crowds; quorum/urls.py includes them under api/crowd/."""
from django.urls import path

from . import api

app_name = "crowd-api"

urlpatterns = [
    path("jobs/<int:pk>/", api.CrowdJobView.as_view(), name="job"),
    path("jobs/<int:pk>/launch/", api.LaunchView.as_view(), name="launch"),
    path("jobs/<int:pk>/assignments/", api.AssignmentsView.as_view(), name="assignments"),
    path("jobs/<int:pk>/settle/", api.SettleView.as_view(), name="settle"),
    path("jobs/<int:pk>/bonus/", api.BonusView.as_view(), name="bonus"),
    path("jobs/<int:pk>/reconcile/", api.ReconcileView.as_view(), name="reconcile"),
]
