from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Human evaluation of submissions"

    def ready(self):
        from annotation import chat_relay
        from evaluation.interactive.services.chats import SystemsRelay

        from . import receivers  # noqa: F401  (connects the receivers that keep ratings in step with responses)

        # Chat items reach registered systems through this relay; annotation never imports evaluation.
        chat_relay.RELAYS.setdefault(chat_relay.DEFAULT_RELAY, SystemsRelay())
