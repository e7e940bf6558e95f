"""URLconf for the hits tests: the crowd pages under crowd/ (as quorum/urls.py should include them),
and stand-ins for the names the shared templates use, independent of other apps' work in progress."""
from django.http import HttpResponse
from django.urls import include, path

urlpatterns = [
    path("crowd/", include("hits.urls")),
    path("api/crowd/", include("hits.web.api_urls")),
    path("work/<str:token>/", lambda request, token: HttpResponse("task page"), name="work"),
    path("accounts/logout/", lambda request: HttpResponse("bye"), name="logout"),
    path("accounts/login/", lambda request: HttpResponse("sign in"), name="login"),
    path("", lambda request: HttpResponse("home"), name="home"),
]
