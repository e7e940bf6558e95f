from django.urls import path

from quorum.urls import urlpatterns as quorum_urlpatterns

from .baseline_view import baseline

urlpatterns = [path("perf/baseline/", baseline), *quorum_urlpatterns]
