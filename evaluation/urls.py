from django.urls import path

from evaluation.campaigns import objective_views, views
from evaluation.fed import views as fed_views
from evaluation.interactive import views as interactive_views

app_name = "evaluation"

urlpatterns = [
    path("", views.campaign_list, name="campaigns"),
    path("<int:pk>/", views.campaign_results, name="campaign-results"),
    path("<int:pk>/entries/<int:entry_pk>/remove/", views.campaign_entry_remove, name="campaign-entry-remove"),
    path("<int:pk>/rename/", views.campaign_rename, name="campaign-rename"),
    path("<int:pk>/delete/", views.campaign_delete, name="campaign-delete"),
    path("test-sets/", views.test_set_upload, name="test-set-upload"),
    path("test-sets/logs/", views.test_set_logs_upload, name="test-set-logs-upload"),
    path("test-sets/<int:pk>/objective/", objective_views.objective_scores, name="objective-scores"),
    path("test-sets/<int:pk>/objective/compute/", objective_views.objective_scoring_start, name="objective-scoring-start"),
    path("test-sets/<int:pk>/objective/compare/", objective_views.objective_scores_compare, name="objective-scores-compare"),
    path("test-sets/<int:pk>/objective/dstc6/", objective_views.dstc6_score, name="dstc6-score"),
    path("entries/", views.entries_upload, name="entries-upload"),
    path("<int:pk>/plots/<str:kind>.png", views.campaign_plot, name="campaign-plot"),
    path("<int:pk>/files/<str:name>", views.campaign_download, name="campaign-download"),
    path("<int:pk>/human-evals/", views.campaign_import_human_eval, name="campaign-import-human-eval"),
    path("<int:pk>/judges/", views.campaign_import_judge, name="campaign-import-judge"),
    path("<int:pk>/adaptive/", views.campaign_set_adaptive, name="campaign-set-adaptive"),
    path("<int:pk>/crowd-job/", views.campaign_create_crowd_job, name="campaign-create-crowd-job"),
    path("<int:pk>/crowd-job/launch/", views.campaign_launch_crowd_job, name="campaign-launch-crowd-job"),
    path("<int:pk>/compute/", views.campaign_compute, name="campaign-compute"),
    path("pairwise/<int:pk>/", views.pairwise_ranking, name="pairwise-ranking"),
    path("pairwise/<int:pk>/ranking.<str:fmt>", views.pairwise_ranking, name="pairwise-ranking-file"),
    path("systems/", interactive_views.systems_page, name="systems"),
    path("systems/register/", interactive_views.system_register, name="system-register"),
    path("systems/<int:pk>/check/", interactive_views.system_check, name="system-check"),
    path("systems/<int:pk>/resume/", interactive_views.system_resume, name="system-resume"),
    path("systems/<int:pk>/change/", interactive_views.system_change, name="system-change"),
    path("systems/<int:pk>/delete/", interactive_views.system_delete, name="system-delete"),
    path("interactive/<int:pk>/", interactive_views.interactive_results, name="interactive-results"),
    path("interactive/<int:pk>/results.<str:fmt>", interactive_views.interactive_results, name="interactive-results-file"),
    path("interactive/<int:pk>/review/<int:screening_pk>/", interactive_views.chat_review, name="chat-review"),
    path("interactive/<int:pk>/screen/", interactive_views.chat_screen, name="chat-screen"),
    path("interactive/new/", interactive_views.chat_job_create, name="chat-job-create"),
    path("test-sets/<int:pk>/interactive-leaderboard/", interactive_views.scheduled_leaderboard, name="scheduled-leaderboard"),
    path("test-sets/<int:pk>/interactive-leaderboard/endpoint/", interactive_views.scheduled_endpoint, name="scheduled-endpoint"),
    path("test-sets/<int:pk>/interactive-leaderboard/schedule/", interactive_views.scheduled_schedule, name="scheduled-schedule"),
    path("test-sets/<int:pk>/interactive-leaderboard/run/", interactive_views.scheduled_run, name="scheduled-run"),
    path("fed/", fed_views.fed_sets, name="fed-sets"),
    path("fed/from-chats/", fed_views.fed_from_chats, name="fed-from-chats"),
    path("fed/static/", fed_views.fed_static, name="fed-static"),
    path("fed/<int:pk>/", fed_views.fed_set, name="fed-set"),
    path("fed/<int:pk>/review/<int:candidate_pk>/", fed_views.fed_review, name="fed-review"),
    path("fed/<int:pk>/launch/", fed_views.fed_launch, name="fed-launch"),
    path("goals/", interactive_views.goals_upload, name="goals-upload"),
]
