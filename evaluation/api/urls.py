"""Evaluation API routes (DRF), for organizers. Meant to be included under /api/evaluation/."""
from django.urls import path

from evaluation.api import objective
from evaluation.api import views as api

app_name = "evaluation-api"

urlpatterns = [
    path("campaigns/", api.CampaignListView.as_view(), name="campaigns"),
    path("campaigns/<int:pk>/", api.CampaignDetailView.as_view(), name="campaign"),
    path("campaigns/<int:pk>/adaptive/", api.CampaignAdaptiveView.as_view(), name="campaign-adaptive"),
    path("campaigns/<int:pk>/results/", api.CampaignResultsView.as_view(), name="campaign-results"),
    path("campaigns/<int:pk>/leaderboard/", api.LeaderboardView.as_view(), name="campaign-leaderboard"),
    path("campaigns/<int:pk>/agreement/", api.CampaignAgreementView.as_view(), name="campaign-agreement"),
    path("campaigns/<int:pk>/human-evals/", api.HumanEvalUploadView.as_view(), name="campaign-human-evals"),
    path("campaigns/<int:pk>/runs/", api.CampaignRunListView.as_view(), name="campaign-runs"),
    path("campaigns/<int:pk>/runs/<int:run_pk>/", api.CampaignRunView.as_view(), name="campaign-run"),
    path("test-sets/", api.TestSetListView.as_view(), name="test-sets"),
    path("test-sets/<int:pk>/logs/", api.TestSetLogsView.as_view(), name="test-set-logs"),
    path("test-sets/<int:pk>/entries/", api.EntriesUploadView.as_view(), name="test-set-entries"),
    path("test-sets/<int:pk>/finalists/", api.FinalistsView.as_view(), name="test-set-finalists"),
    path("test-sets/<int:pk>/scoring/", objective.ScoringView.as_view(), name="test-set-scoring"),
    path("test-sets/<int:pk>/scoring/<int:run_pk>/", objective.ScoringRunView.as_view(), name="test-set-scoring-run"),
    path("test-sets/<int:pk>/score-comparison/", objective.ScoreComparisonView.as_view(), name="test-set-score-comparison"),
    path("dstc6/score/", objective.Dstc6ScoreView.as_view(), name="dstc6-score"),
    path("agreement/", api.AgreementUploadView.as_view(), name="agreement"),
    path("systems/", api.DialogSystemListView.as_view(), name="systems"),
    path("goals/", api.GoalSetListView.as_view(), name="goals"),
    path("fed/<int:pk>/results/", api.FedResultsView.as_view(), name="fed-results"),
    path("interactive/<int:pk>/", api.InteractiveResultsView.as_view(), name="interactive-results"),
    path("pairwise/<int:pk>/", api.PairwiseRankingView.as_view(), name="pairwise-ranking"),
    path("pairwise/<int:pk>/reports/<int:report_pk>/", api.PairwiseReportView.as_view(), name="pairwise-report"),
]
