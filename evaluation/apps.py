from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Human evaluation of submissions"

    def ready(self):
        from annotation import chat_relay, extensions
        from evaluation.campaigns.links import pairwise_ranking_link
        from evaluation.interactive.demo import run_interactive_demo
        from evaluation.interactive.links import interactive_results_link
        from evaluation.interactive.services.chats import SystemsRelay

        from . import receivers  # noqa: F401  (connects the receivers that keep ratings in step with responses)

        # Chat items reach registered systems through this relay; annotation never imports evaluation.
        if chat_relay.DEFAULT_RELAY not in extensions.chat_relays:
            extensions.chat_relays.register(chat_relay.DEFAULT_RELAY, SystemsRelay())
        # The demo's interactive part runs after annotation's own; annotation's runner imports no evaluation.
        extensions.demo_parts.register("run_interactive_demo", run_interactive_demo)
        # A chat job's page links to its leaderboard, which this app keeps.
        if "interactive_results" not in extensions.job_links:
            extensions.job_links.register("interactive_results", interactive_results_link)
        # A pairwise job's page links to its ranking.
        if "pairwise_ranking" not in extensions.job_links:
            extensions.job_links.register("pairwise_ranking", pairwise_ranking_link)
