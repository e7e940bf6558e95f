"""The project's URLs plus the evaluation API, as the lead will include it in quorum/urls.py."""
from django.urls import include, path

from quorum.urls import urlpatterns as project_urlpatterns

urlpatterns = [path("api/evaluation/", include("evaluation.api.urls")), *project_urlpatterns]
