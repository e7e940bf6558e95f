from django.urls import path

from . import views

app_name = "evaluation"

urlpatterns = [
    path("", views.campaign_list, name="campaigns"),
    path("<int:pk>/", views.campaign_results, name="campaign-results"),
    path("<int:pk>/plots/<str:kind>.png", views.campaign_plot, name="campaign-plot"),
]
