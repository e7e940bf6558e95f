from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.api.views import unknown_api_address

urlpatterns = [
    # Pages that do not name an icon (the admin, the API docs) make browsers ask for /favicon.ico.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The one-time set-password links of annotators added by an organizer (annotation.services.team).
    path("accounts/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(), name="password_reset_confirm"),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/evaluation/", include("evaluation.api.urls")),
    path("api/", include("annotation.api.urls")),
    path("organize/", include("annotation.web.organizer_urls")),
    path("evaluation/", include("evaluation.urls")),
    path("crowd/", include("hits.urls")),
    path("api/crowd/", include("hits.web.api_urls")),
    # after every API route: a JSON 404 (any character, a newline in a spoilt id too)
    re_path(r"^api/(?P<rest>(?s:.*))$", unknown_api_address),
    path("", include("annotation.urls")),
]

# DEBUG off: the site's error pages, JSON under /api/ (quorum/error_pages.py).
handler400 = "quorum.error_pages.bad_request"
handler403 = "quorum.error_pages.permission_denied"
handler404 = "quorum.error_pages.page_not_found"
handler500 = "quorum.error_pages.server_error"
